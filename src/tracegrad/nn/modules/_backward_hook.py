"""Module full backward hooks, built from autograd itself (PyTorch's ``BackwardHook``).

The module's tensor inputs and outputs each pass through an identity node, ``BackwardHookFunctionBackward``.
The output node's post-hook captures ``grad_output`` (and runs the backward pre-hooks); the input node's
post-hook then calls the user hooks with ``(module, grad_input, grad_output)``. The identity nodes return
their incoming gradients unchanged (zeros where none came, as a custom Function materializes them), so a graph
built with ``create_graph=True`` never passes through them again: the hooks fire once per backward, also under
double backward.
"""

from __future__ import annotations

from ..._events import emit as _emit_event
from ..._factories import zeros_array_tensor
from ..._state import STATE
from ..._tensor import Tensor
from ..._warnings import warn_at_caller
from ...autograd.edges import gradient_edge
from ...autograd.function import _alias_no_grad, _set_edge, _set_view_creation_meta
from ...autograd.node import Node


class BackwardHookFunctionBackward(Node):
    """Identity over several tensors (PyTorch's ``BackwardHookFunction``)."""

    __slots__ = ()
    _name = "BackwardHookFunctionBackward"
    # PyTorch's is the node class of a custom Function (BackwardHookFunction): it prints as one.
    __repr__ = object.__repr__

    def apply(self, grads):
        # A custom Function materializes the gradients it did not receive as zeros (unused outputs, and those
        # of the tensors that need no gradient), so the hooks see zeros there, and an input whose result went
        # unused gets a zero gradient, as in PyTorch.
        out = list(grads)
        for i, g in enumerate(out):
            if g is None:
                out[i] = zeros_array_tensor(*self._out_meta[i])
        return out


BackwardHookFunctionBackward.__module__ = "tracegrad.autograd.function"


def apply_identity(tensors: list) -> tuple[list, Node | None]:
    """Route ``tensors`` through one identity node, as PyTorch's ``BackwardHookFunction.apply(*tensors)``.

    Like any custom Function returning its inputs as they are, every result is a view of its input made
    without history; those that need no grad are its non-differentiable outputs, the others get the node as
    history and may not be modified in place (IN_CUSTOM_FUNCTION, or MULTI_OUTPUT_NODE for several). The node
    takes one gradient per tensor and has one edge per tensor (none for those that need no grad)."""
    node = BackwardHookFunctionBackward()
    edges = []
    outs = []
    nondiff = set()
    for i, t in enumerate(tensors):
        out = _alias_no_grad(t)
        if t._rg:
            edges.append(gradient_edge(t))
            _set_edge(out, node, i)
        else:
            edges.append((None, 0))
            nondiff.add(i)
        outs.append(out)
    meta = tuple((t._data.shape, t._data.dtype) for t in tensors)
    node._edges = tuple(edges)
    node._in_meta = meta
    node._n_out = len(tensors)
    node._out_meta = meta
    _set_view_creation_meta(outs, set(), frozenset(nondiff), False)
    return outs, (node if len(nondiff) < len(tensors) else None)


def _emit_module_hook(kind: str, module, hook) -> None:
    from ...autograd.engine import current_node
    _emit_event("hook", kind=kind, node=current_node(), hook=hook, output_nr=None, tensor=None, module=module)


class BackwardHook:
    """Links the gradients captured at a module's outputs with those at its inputs and calls the hooks."""

    def __init__(self, module, user_hooks: list, user_pre_hooks: list) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size: int) -> tuple:
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values) -> tuple:
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, register, args: tuple):
        tensors_idx = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        tensors = [args[i] for i in tensors_idx]
        if not (any(t._rg for t in tensors) and STATE.grad_enabled):
            return args, None
        new_tensors, node = apply_identity(tensors)
        if not new_tensors:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        if node is None:
            raise RuntimeError(
                "Error while setting up backward hooks. Please open an issue with a code sample to "
                "reproduce this."
            )
        register(node, tensors_idx)
        arg_list = list(args)
        for idx, val in zip(tensors_idx, new_tensors):
            arg_list[idx] = val
        return tuple(arg_list), tensors_idx

    def setup_input_hook(self, args: tuple) -> tuple:
        def register(node, positions: list) -> None:
            def hook(grad_input, _grad_output):
                if self.grad_outputs is None:
                    # The gradient reached the inputs without passing through the outputs (double backward).
                    return None
                res = self._pack_with_none(positions, grad_input, self.n_inputs)
                for user_hook in self.user_hooks:
                    if STATE.observed:
                        _emit_module_hook("module_post", self.module, user_hook)
                    out = user_hook(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError(
                            "Backward hook returned an invalid number of grad_input, got "
                            f"{len(out)}, but expected {len(res)}"
                        )
                    res = out
                self.grad_outputs = None
                return self._unpack_none(positions, res)

            node.register_hook(hook)

        res, input_idx = self._apply_on_tensors(register, args)
        self.n_inputs = len(args)
        self.input_tensors_index = input_idx
        return res

    def setup_output_hook(self, result):
        def register(node, positions: list) -> None:
            def hook(_grad_input, grad_output):
                self.grad_outputs = self._pack_with_none(positions, grad_output, self.n_outputs)
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for pre_hook in self.user_pre_hooks:
                        if STATE.observed:
                            _emit_module_hook("module_pre", self.module, pre_hook)
                        new = pre_hook(self.module, self.grad_outputs)
                        if new is None:
                            continue
                        if len(new) != expected:
                            raise RuntimeError(
                                "Backward pre hook returned an invalid number of grad_output, got "
                                f"{len(new)}, but expected {expected}"
                            )
                        self.grad_outputs = tuple(new)
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    # (at the line that started the backward pass, past tracegrad's engine, as torch shows it)
                    warn_at_caller(
                        "Full backward hook is firing when gradients are computed with respect to module "
                        "outputs since no inputs require gradients. See "
                        "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                        "#torch.nn.Module.register_full_backward_hook for more details.",
                        UserWarning,
                    )
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for user_hook in self.user_hooks:
                        if STATE.observed:
                            _emit_module_hook("module_post", self.module, user_hook)
                        res = user_hook(self.module, grad_inputs, self.grad_outputs)
                        if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                            raise RuntimeError(
                                "Backward hook for Modules where no input requires gradient should "
                                "always return None or None for all gradients."
                            )
                    self.grad_outputs = None
                if local is not None:
                    return tuple(local[i] for i in positions)
                return None

            node.register_hook(hook)

        is_tuple = isinstance(result, tuple)
        args = result if is_tuple else (result,)
        res, output_idx = self._apply_on_tensors(register, args)
        self.n_outputs = len(args)
        self.output_tensors_index = output_idx
        return res if is_tuple else res[0]
