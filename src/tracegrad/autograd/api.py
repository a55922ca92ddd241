"""``torch.autograd.backward`` and ``torch.autograd.grad``: argument checking around the engine."""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Mapping

import numpy as np

from .._arg_parser import non_tensor_element, tp_name
from .._state import STATE
from .._tensor import Tensor, _wrap
from ..backend.dtypes import from_numpy_dtype
from ..ops._util import check_differentiable_grad
from . import engine
from .edges import gradient_edge
from .graph import GradientEdge


def _as_tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, Tensor) or _is_edge(x):  # a GradientEdge is a tuple, but stands for one tensor
        return (x,)
    return tuple(x)


def _shape_str(t: Tensor) -> str:
    return f"torch.Size([{', '.join(str(s) for s in t._data.shape)}])"


def _shape_text(shape: tuple) -> str:
    return f"torch.Size([{', '.join(str(s) for s in shape)}])"


def _output_meta(out) -> tuple:
    """(shape, dtype, requires_grad) of a backward root: a tensor or a GradientEdge."""
    if isinstance(out, Tensor):
        return out._data.shape, out.dtype, out._rg
    meta = out.node._out_meta if getattr(out.node, "_out_meta", None) else out.node._in_meta
    shape, np_dtype = meta[out.output_nr]
    return shape, from_numpy_dtype(np_dtype), True


def _check_counts(outputs: tuple, grads: list) -> None:
    """The engine's check, after ``_make_grads`` has paired outputs and gradients as ``zip`` does (PyTorch's
    order: a gradient of a wrong type is reported before a wrong count; extra gradients are dropped)."""
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def _check_batched_grad_shape(i: int, out, grad: Tensor, shape: tuple) -> None:
    """PyTorch's check of one batched gradient: it indexes the batch's first gradient (so a 0-dim or empty batch
    is refused as ``grad[0]`` refuses it) and compares that with the output; its message then drops one more
    leading size of that first gradient (``grad.shape[2:]``), as PyTorch's ``_calculate_shape`` does."""
    first_shape = grad[0]._data.shape
    if first_shape == shape:
        return
    if _is_edge(out):
        raise RuntimeError("Batched grads are not supported with GradientEdge")
    raise RuntimeError(
        "If `is_grads_batched=True`, we interpret the first dimension of each grad_output as the "
        "batch dimension. The sizes of the remaining dimensions are expected to match the shape of "
        f"corresponding output, but a mismatch was detected: grad_output[{i}] has a shape of "
        f"{_shape_text(first_shape[1:])} and output[{i}] has a shape of {_shape_text(shape)}. If you only want "
        "some tensors in `grad_output` to be considered batched, consider using vmap.")


def _make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    result = []
    for i, (out, grad) in enumerate(zip(outputs, grads)):
        if out.__class__ is not Tensor and not isinstance(out, Tensor) and not _is_edge(out):
            raise AssertionError("Expected output to be a torch.Tensor")
        if grad is None and out.__class__ is Tensor and out._rg:
            data = out._data
            if data.size == 1 and data.dtype.kind == "f" and data.__class__ is np.ndarray:
                # ``loss.backward()``: what ``_factories.ones(shape, dtype=dtype)`` makes, without its lookups
                result.append(_ones_seed(out) if STATE.profiler is None
                              else STATE.profiler.composite("aten::ones_like", (out,), _ones_seed, graphed=False))
                continue
        shape, dtype, requires_grad = _output_meta(out)
        if isinstance(grad, Tensor):
            gshape = grad._data.shape
            if is_grads_batched:
                _check_batched_grad_shape(i, out, grad, shape)
            elif gshape != shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {_shape_text(gshape)} and "
                                   f"output[{i}] has a shape of {_shape_text(shape)}.")
            if dtype.is_complex != grad.dtype.is_complex:
                raise RuntimeError("For complex Tensors, both grad_output and output are required to have the same "
                                   f"dtype. Mismatch in dtype: grad_output[{i}] has a dtype of {grad.dtype} and "
                                   f"output[{i}] has a dtype of {dtype}.")
            check_differentiable_grad(dtype.np)  # (the engine's, of the root's gradient cast to the output's)
            result.append(grad)
        elif grad is None:
            if requires_grad:
                if math.prod(shape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not dtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {dtype}")
                from .. import _factories

                if STATE.profiler is None:
                    result.append(_factories.ones(shape, dtype=dtype))
                else:  # named as PyTorch's implicit gradient is made
                    ones = functools.partial(_factories.ones, shape, dtype=dtype)
                    result.append(STATE.profiler.composite("aten::ones_like", (), ones, graphed=False))
            else:
                result.append(None)
        else:
            raise TypeError(f"gradients can be either Tensors or None, but got {type(grad).__name__}")
    return result


def _is_edge(x) -> bool:
    return isinstance(x, GradientEdge)


def _inputs_tuple(inputs, api: str) -> tuple:
    """``inputs=`` of backward() or grad() as torch reads it: one Tensor or GradientEdge, a dict's values, or
    any other iterable (``tuple(inputs)``: ``grad(y, None)`` raises Python's "not iterable")."""
    if isinstance(inputs, Tensor) or _is_edge(inputs):  # (a GradientEdge is a tuple, but stands for one tensor)
        return (inputs,)
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{api}()` must be a dict, not {type(inputs).__name__}. Other "
                        "Mapping types are not supported.")
    return tuple(inputs)


def _input_edge(t) -> tuple:
    """A gradient edge for an ``inputs=`` entry: a Tensor requiring grad, or a GradientEdge (torch's engine
    judges each in turn, naming a wrong one's type by its ``tp_name``)."""
    if _is_edge(t):
        return (t.node, t.output_nr)
    if not isinstance(t, Tensor):
        raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got {tp_name(t)}")
    if not t._rg:
        raise RuntimeError("One of the differentiated Tensors does not require grad")
    return gradient_edge(t)


def _root_edges(outputs: tuple) -> list:
    roots = []
    for i, out in enumerate(outputs):
        if not isinstance(out, Tensor) and _is_edge(out):
            roots.append((out.node, out.output_nr))
            continue
        if not isinstance(out, Tensor):
            raise non_tensor_element(i, 0, out)
        if not out._rg:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        roots.append(gradient_edge(out))
    return roots


def _ones_seed(output: Tensor) -> Tensor:
    """The gradient ``loss.backward()`` starts from: ones shaped like the (one-element) output."""
    data = output._data
    return _wrap(np.array(1, dtype=data.dtype) if not data.shape else np.ones(data.shape, dtype=data.dtype))


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves (or of ``inputs``)."""
    if (tensors.__class__ is Tensor and grad_tensors is None and inputs is None and grad_variables is None
            and not create_graph and tensors._rg):
        # ``loss.backward()``, the common call, without the general argument handling (same result)
        data = tensors._data
        if data.size == 1 and data.dtype.kind == "f" and data.__class__ is np.ndarray:
            if STATE.profiler is None:
                # (np.ones is a Python-level function, about a microsecond; np.array makes the 0-d one directly)
                seed = _wrap(np.array(1, dtype=data.dtype) if not data.shape else np.ones(data.shape, dtype=data.dtype))
            else:  # named as PyTorch's implicit gradient is made
                seed = STATE.profiler.composite("aten::ones_like", (tensors,), _ones_seed, graphed=False)
            engine.execute([gradient_edge(tensors)], [seed], bool(retain_graph), False, None, accumulate_grad=True)
            return
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.", FutureWarning, stacklevel=2)
        if grad_tensors is None:
            grad_tensors = grad_variables
        else:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both passed to "
                               "`backward()`. Please only use `grad_tensors`.")
    inputs_t = _inputs_tuple(inputs, "backward") if inputs is not None else None
    if inputs_t == ():
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors) if grad_tensors is not None else (None,) * len(outputs)
    grads = _make_grads(outputs, grads)
    _check_counts(outputs, grads)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph:  # (torch 2.13 warns with ``inputs=`` too)
        from .._warnings import warn_once

        warn_once("backward_create_graph",
            "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
            "gradient which can cause a memory leak. We recommend using autograd.grad when creating the graph to "
            "avoid this. If you have to use this function, make sure to reset the .grad fields of your parameters "
            "to None after use to break the cycle and avoid the leak.", UserWarning, stacklevel=4)
    roots = _root_edges(outputs)  # (PyTorch checks the roots first, then the inputs)
    input_edges = None
    if inputs_t is not None:
        input_edges = []
        for t in inputs_t:
            if isinstance(t, Tensor):
                t.retain_grad()  # backward(inputs=non_leaf) fills its .grad; it refuses a tensor without grad
            input_edges.append(_input_edge(t))
    engine.execute(roots, grads, bool(retain_graph), bool(create_graph), input_edges, accumulate_grad=True)


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused: bool | None = None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """Gradients of ``outputs`` with respect to ``inputs``, returned rather than accumulated."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs_t = _as_tuple(outputs)
    if type(inputs) is dict:  # (torch 2.13: a dict of inputs gives a dict of gradients, keys kept)
        return dict(zip(inputs, grad(outputs, tuple(inputs.values()), grad_outputs, retain_graph, create_graph,
                                     only_inputs, allow_unused, is_grads_batched, materialize_grads), strict=True))
    inputs_t = _inputs_tuple(inputs, "grad")
    if not inputs_t:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to True). To accumulate "
                      "gradient for other parts of the graph, please use torch.autograd.backward.", FutureWarning,
                      stacklevel=2)
    grads_t = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs_t)
    if is_grads_batched:
        return _batched_grad(outputs_t, inputs_t, grads_t, retain_graph, create_graph, allow_unused,
                             materialize_grads)
    grads = _make_grads(outputs_t, grads_t)
    _check_counts(outputs_t, grads)
    if retain_graph is None:
        retain_graph = create_graph
    roots = _root_edges(outputs_t)  # (PyTorch checks the roots first, then the inputs)
    input_edges = [_input_edge(t) for t in inputs_t]
    captured = engine.execute(roots, grads, bool(retain_graph), bool(create_graph), input_edges,
                              accumulate_grad=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs_t, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            if materialize_grads:
                from .. import _functional_core as F  # (the operator library: only for this rare case)

                if _is_edge(t):
                    raise RuntimeError("materialize_grads cannot be used when the given input is a GradientEdge")
                g = F.zeros_like(t, requires_grad=bool(create_graph)) if isinstance(t, Tensor) else \
                    _zeros_for_edge(input_edges[i])
        result.append(g)
    return tuple(result)


def _zeros_for_edge(edge) -> Tensor:
    from .. import _factories

    shape, dt = edge[0]._in_meta[edge[1]] if edge[0]._in_meta else ((), None)
    return _factories.zeros_array_tensor(shape, dt)


def _batched_grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused, materialize_grads) -> tuple:
    """``is_grads_batched=True``: the first dimension of each grad_output indexes independent backward passes."""
    from .. import _functional_core as F

    _make_grads(outputs, grads, is_grads_batched=True)
    sizes = {g._data.shape[0] for g in grads if isinstance(g, Tensor)}
    if len(sizes) > 1:
        raise RuntimeError("Expected all batched grad_outputs to have the same batch size")
    n = sizes.pop() if sizes else 1
    per_input: list[list] = [[] for _ in inputs]
    for b in range(n):
        sliced = [F.select(g, 0, b) if isinstance(g, Tensor) else None for g in grads]
        res = grad(outputs, inputs, sliced, retain_graph=True if b < n - 1 else retain_graph,
                   create_graph=create_graph, allow_unused=True, materialize_grads=materialize_grads)
        for k, g in enumerate(res):
            per_input[k].append(g)
    result = []
    for t, gs in zip(inputs, per_input):
        if all(g is None for g in gs):
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been used in the graph. "
                                   "Set allow_unused=True if this is the desired behavior.")
            result.append(None)
            continue
        gs = [g if g is not None else F.zeros_like(t) for g in gs]
        result.append(F.stack(gs, 0))
    return tuple(result)

