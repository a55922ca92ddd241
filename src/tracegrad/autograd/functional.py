"""``torch.autograd.functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp`` and ``hvp``.

Everything is built on ``autograd.grad``. ``jvp`` and ``hvp`` use the double-backward trick, as PyTorch
does: a vjp is linear in its cotangent ``u``, so differentiating ``<vjp(u), v>`` with respect to ``u``
gives ``J v``. Inputs are re-wrapped before ``func`` sees them (``view_as`` when the graph is kept, a
detached copy otherwise) so that results never leak history into the caller's tensors unless
``create_graph=True`` asks for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._state import STATE
from .._tensor import Tensor
from .api import grad as _grad
from .grad_mode import enable_grad, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


# ---- argument handling ------------------------------------------------------------------------------------


def _as_tuple(inp, arg_name: str | None = None, fn_name: str | None = None):
    """``(was_tuple, tuple_of_tensors)``, checking every element is a Tensor when names are given."""
    if arg_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"the value at index {i} has type {type(el)}" if is_tuple else \
                f"the given {arg_name} has type {type(el)}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                            f"Tensors but {where}.")
    return is_tuple, items


def _unpack(res, to_unpack):
    """Undo ``_as_tuple`` on results: ``to_unpack`` is one flag, or (outer, inner) flags when nested."""
    if isinstance(to_unpack, tuple):
        outer, inner = to_unpack
        if not inner:
            res = tuple(el[0] for el in res)
        if not outer:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def _preprocess(inputs: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh tensor objects for ``func``: differentiable aliases when the caller's graph is kept."""
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _postprocess(values, create_graph: bool):
    if isinstance(values, Tensor):
        return values if create_graph else values.detach()
    return tuple(_postprocess(v, create_graph) for v in values)


def _size(t: Tensor) -> str:
    return f"torch.Size([{', '.join(str(s) for s in t.shape)}])"


def _validate_v(v: tuple, other: tuple, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {_size(el_other)} but got "
                               f"{_size(el_v)}.")


def _check_requires_grad(values: tuple, kind: str, strict: bool) -> None:
    """strict mode: every value must require grad (``kind`` picks PyTorch's wording)."""
    if not strict:
        return
    for i, t in enumerate(values):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This "
                               "is not allowed in strict mode.")
        if t.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                               "independent of the input. This is not allowed in strict mode. You should "
                               "ensure that your function is thrice differentiable and that the hessian "
                               "depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided "
                               f"function with respect to input {i} is independent of the input. This is not "
                               "allowed in strict mode. You should ensure that your function is twice "
                               "differentiable and that the jacobian depends on the inputs (this would be "
                               "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                           "outputs must be computed in a differentiable manner from the input when running "
                           "in strict mode.")


def _autograd_grad(outputs: tuple, inputs: tuple, grad_outputs=None, create_graph: bool = False,
                   retain_graph: bool | None = None, is_grads_batched: bool = False) -> tuple:
    """``autograd.grad`` that skips outputs which are None or do not require grad (None results then)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                 create_graph=create_graph,
                 retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_STAGE_NONE = {
    "back": ("The output of the user-provided function is independent of input {i}. This is not allowed in "
             "strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the grad_outputs "
                   "when using the double backward trick to compute forward mode gradients. This is not "
                   "allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. This is not "
                    "allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {i} in the "
                          "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                          "double backward trick to replace forward mode AD."),
}


def _fill_in_zeros(grads: tuple, refs: tuple, strict: bool, create_graph: bool, stage: str) -> tuple:
    """Replace None gradients by zeros shaped like ``refs`` (or raise in strict mode)."""
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_NONE[stage].format(i=i))
            from ..ops.creation import zeros_like

            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This "
                               "is not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare_v(v, name: str, create_graph: bool, other: tuple, is_other_tuple: bool) -> tuple:
    _, v = _as_tuple(v, "v", name)
    v = _preprocess(v, create_graph, need_graph=False)
    _validate_v(v, other, is_other_tuple)
    return v


def _single_element_v_error(what: str) -> RuntimeError:
    return RuntimeError(f"The vector v can only be None if the {what} a single Tensor with a single element.")


# ---- vjp / jvp --------------------------------------------------------------------------------------------


def vjp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T J)``: the vector-Jacobian product of ``func`` at ``inputs``."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        if v is not None:
            v = _prepare_v(v, "vjp", create_graph, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise _single_element_v_error("user-provided function returns")
    with set_grad_enabled(True if create_graph else STATE.grad_enabled):
        grads = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))


def jvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), J v)``, computed with the double-backward trick."""
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        if v is not None:
            v = _prepare_v(v, "jvp", create_graph, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise _single_element_v_error("input to the user-provided function is")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        # u: cotangents the vjp is linear in; d<vjp(u), v>/du = J v.
        us = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, us, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else STATE.grad_enabled):
        grads = _autograd_grad(grad_inputs, us, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, outputs, strict, create_graph, "back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_outputs_tuple))


# ---- jacobian / hessian -----------------------------------------------------------------------------------


def _standard_basis(tensors: tuple, numels: tuple) -> tuple:
    """One (total, numel_k) block per tensor; stacked they form the identity of size ``sum(numels)``."""
    from ..ops.creation import new_zeros

    total = sum(numels)
    chunks = []
    start = 0
    for t, n in zip(tensors, numels):
        chunk = new_zeros(t, (total, n))
        for k in range(n):
            chunk[start + k, k] = 1
        start += n
        chunks.append(chunk)
    return tuple(chunks)


def jacobian(func: Callable, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of ``func`` at ``inputs``: ``J[i][j]`` is ``outputs[i].shape + inputs[j].shape``."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If '
                             'your function has more outputs than inputs, "forward-mode" tends to be more '
                             'performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please '
                                      'either set `create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize:
            if strict:
                raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                                   "are not supported together. Please either set `strict=False` or "
                                   "`vectorize=False`.")
            jac = _jacobian_batched(outputs, inputs, create_graph)
        else:
            jac = _jacobian_rows(outputs, inputs, create_graph, strict)
        jac = _postprocess(jac, create_graph)
        return _unpack(jac, (is_outputs_tuple, is_inputs_tuple))


def _jacobian_rows(outputs: tuple, inputs: tuple, create_graph: bool, strict: bool) -> tuple:
    """One backward per output element."""
    from ..ops.creation import zeros_like
    from ..ops.shape import stack

    jacobian = []
    for i, out in enumerate(outputs):
        rows: tuple[list, ...] = tuple([] for _ in inputs)
        flat = out.reshape(-1)
        for j in range(out.nelement()):
            vj = _autograd_grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
            for k, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                if g is not None:
                    if strict and create_graph and not g.requires_grad:
                        raise RuntimeError("The jacobian of the user-provided function is independent of "
                                           f"input {i}. This is not allowed in strict mode when "
                                           "create_graph=True.")
                    row.append(g)
                else:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                           f"input {k}. This is not allowed in strict mode.")
                    row.append(zeros_like(inp))
        jacobian.append(tuple(stack(row, 0).view(tuple(out.shape) + tuple(inputs[k].shape)) if row
                              else inputs[k].new_zeros(tuple(out.shape) + tuple(inputs[k].shape))
                              for k, row in enumerate(rows)))
    return tuple(jacobian)


def _jacobian_batched(outputs: tuple, inputs: tuple, create_graph: bool) -> tuple:
    """``vectorize=True``: all output elements at once through ``is_grads_batched``."""
    from ..ops.creation import zeros_like

    numels = tuple(o.nelement() for o in outputs)
    basis = _standard_basis(outputs, numels)
    flat_outputs = tuple(o.reshape(-1) for o in outputs)
    vj = list(_autograd_grad(flat_outputs, inputs, basis, create_graph=create_graph, is_grads_batched=True))
    for k, g in enumerate(vj):
        if g is None:
            vj[k] = zeros_like(inputs[k]).expand((sum(numels),) + tuple(inputs[k].shape))
    per_input = []
    for jac_k, inp in zip(vj, inputs):
        per_input.append([jac.reshape(tuple(out.shape) + tuple(inp.shape))
                          for jac, out in zip(jac_k.split(list(numels), 0), outputs)])
    return tuple(zip(*per_input))


def _jacfwd(func: Callable, inputs, strict: bool, vectorize: bool) -> Any:
    """Forward-mode Jacobian: one dual pass per input element (or ``tracegrad.func.vmap`` over them)."""
    from . import forward_ad as fwAD

    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` '
                           'are not supported together (yet). Please either set `strict=False` or '
                           '`strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian "
                                  "isonly implemented for `vectorize=True`.")
    from ..ops.creation import zeros_like
    from ..ops.shape import stack

    numels = tuple(inp.nelement() for inp in inputs)
    basis = _standard_basis(inputs, numels)
    columns: list = []
    is_outputs_tuple = False
    outputs: tuple = ()
    for col in range(sum(numels)):
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(inp, b[col].view_as(inp)) for inp, b in zip(inputs, basis))
            is_outputs_tuple, dual_outputs = _as_tuple(func(*duals), "outputs", "jacobian")
            tangents, primals = [], []
            for d in dual_outputs:
                primal, tangent = fwAD.unpack_dual(d)
                primals.append(primal)
                tangents.append(tangent if tangent is not None else zeros_like(primal))
            outputs = tuple(primals)
            columns.append(tangents)
    jac = []
    for i, out in enumerate(outputs):
        # torch's vmap gives the columns batched in front (total,) + out.shape; it splits them per input and
        # moves that dimension last, so the graph ends in Permute and ReshapeAlias nodes as torch's does
        batched = stack([c[i] for c in columns], 0)
        jac.append([part.permute(*range(1, part.ndim), 0).reshape(tuple(out.shape) + tuple(inp.shape))
                    for part, inp in zip(batched.split(numels, dim=0), inputs)])
    # torch's forward-mode path nests lists, not tuples: what is left after unpacking stays a list
    return _unpack(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable, inputs, create_graph: bool = False, strict: bool = False, vectorize: bool = False,
            outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar function: ``H[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a "
                               "single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(_as_tuple(jac), "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (is_inputs_tuple, is_inputs_tuple))


# ---- vhp / hvp --------------------------------------------------------------------------------------------


def _scalar_function_setup(func: Callable, inputs, v, create_graph: bool, strict: bool, name: str):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _preprocess(inputs, create_graph, need_graph=True)
    if v is not None:
        v = _prepare_v(v, name, create_graph, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise _single_element_v_error("input to the user-provided function is")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single "
                           "element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac


def vhp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), v^T H)`` for a scalar function."""
    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else STATE.grad_enabled):
        grads = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))


def hvp(func: Callable, inputs, v=None, create_graph: bool = False, strict: bool = False) -> tuple:
    """``(func(inputs), H v)`` for a scalar function, with the double-backward trick."""
    from ..ops.creation import zeros_like

    with enable_grad():
        is_inputs_tuple, inputs, v, is_outputs_tuple, outputs, jac = _scalar_function_setup(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else STATE.grad_enabled):
        grads = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        result = _fill_in_zeros(grads, inputs, strict, create_graph, "double_back_trick")
    return (_unpack(_postprocess(outputs, create_graph), is_outputs_tuple),
            _unpack(_postprocess(result, create_graph), is_inputs_tuple))
