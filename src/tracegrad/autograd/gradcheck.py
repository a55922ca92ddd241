"""``torch.autograd.gradcheck``: analytical derivatives against central finite differences.

Slow mode builds whole Jacobians: one finite difference per input element, one backward pass (or one
forward-AD pass) per output (or input) element, each run twice to detect non-reentrant backwards.
Fast mode compares scalars ``v^T J u`` for random unit vectors ``u`` (per input) and ``v`` (per output),
so it costs one finite difference and one backward per input/output pair.

Complex outputs are checked as two real functions (their real and imaginary parts), complex inputs in
forward mode as two real inputs, as PyTorch does. The numerical work is done on the tensors' arrays
(inputs are perturbed in place through their storage, like ``input.data`` in PyTorch); everything the
user's function sees goes through the ordinary tensor API.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from .._tensor import Tensor, _wrap
from ..backend import array_module
from ..backend.dtypes import from_numpy_dtype

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian",
           "get_numerical_jacobian_wrt_specific_input"]


class GradcheckError(RuntimeError):
    """Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = """

NOTE: If your op relies on non-deterministic operations i.e., it is listed here:
https://pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html
this failure might be expected.

If you are adding a new operator, please file an issue and then use one of the
workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck.
If the test
- manually invokes gradcheck/gradgradcheck, then call gradcheck/gradgradcheck
  with `nondet_tol=<tol>` as a keyword argument.
- is OpInfo-based (e.g., in test_ops_gradients.py), then modify the OpInfo for the test
  to have `gradcheck_nondet_tol=<tol>`.
- is a Module test (e.g., in common_nn.py), then modify the corresponding
  module_test entry to have `gradcheck_nondet_tol=<tol>`
"""



def _tg():
    return importlib.import_module("tracegrad")


def _fwad():
    from . import forward_ad

    return forward_ad


# ---- small helpers ----------------------------------------------------------------------------------------


def _as_tuple(x) -> tuple:
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _iter_tensors(x, only_requiring_grad: bool = False):
    if isinstance(x, Tensor):
        if x.requires_grad or not only_requiring_grad:
            yield x
    elif isinstance(x, (list, tuple)):
        for elem in x:
            yield from _iter_tensors(elem, only_requiring_grad)


def _differentiable_outputs(x) -> tuple:
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _is_float_or_complex(t) -> bool:
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _arr(t: Tensor):
    """The tensor's array (NumPy or CuPy), never a copy."""
    return t._data


def _tensor(arr) -> Tensor:
    return _wrap(arr)


def _fmt(arr) -> str:
    """A Jacobian for an error message, as PyTorch's f-string prints a tensor (a 0-d one, fast mode's, as its
    number), or like an array if that fails."""
    try:
        return format(_tensor(array_module(arr).asarray(arr)), "")
    except Exception:  # a message must never fail to build
        return repr(arr)


def _clone_outputs(out) -> tuple:
    return tuple(o.detach().clone() if isinstance(o, Tensor) else o for o in _as_tuple(out))


def _grad(outputs, inputs, grad_outputs, **kwargs):
    from .api import grad

    return grad(outputs, inputs, grad_outputs, **kwargs)


def _allclose(a, b, rtol: float, atol: float) -> bool:
    xp = array_module(a)
    dt = np.promote_types(a.dtype, b.dtype)
    return bool(xp.allclose(a.astype(dt), xp.asarray(b).astype(dt), rtol=rtol, atol=atol))


def _real_dtype(dt):
    return np.dtype(np.float64) if dt == np.complex128 else np.dtype(np.float32) if dt == np.complex64 else dt


def _random_vec(t: Tensor, generator, downcast_complex: bool = False):
    """A random unit vector (non-negative entries) with ``t.numel()`` elements and ``t``'s dtype, drawn as PyTorch's
    fast mode draws it: ``rand`` (float) from a generator of its own, cast, divided by its norm. The same numbers
    as torch's, so a borderline check passes or fails alike, and the user's generator is not touched."""
    tg = _tg()
    dt = _real_dtype(_arr(t).dtype) if downcast_complex else _arr(t).dtype
    vec = tg.rand(_arr(t).size, generator=generator).to(from_numpy_dtype(dt))
    vec /= vec.norm()
    return array_module(_arr(t)).asarray(vec._data)


# ---- input / output validation ----------------------------------------------------------------------------


def _check_inputs(tupled_inputs: tuple) -> None:
    any_requires_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if isinstance(inp, Tensor) and inp.requires_grad:
            if _arr(inp).dtype not in (np.float64, np.complex128):
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point "
                              "or complex. This check will likely fail if all the inputs are not of double "
                              "precision floating point or complex. ", UserWarning, stacklevel=4)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only "
                                   "supports inputs that are non-overlapping to be able to compute the "
                                   "numerical gradients correctly. You should call .contiguous on the input "
                                   "before passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them "
                         "have requires_grad=True.")


def _check_same_dtype_and_shape(out1: Tensor, out2: Tensor, eps: float, idx=None) -> None:
    on_index = f"on index {idx} " if idx is not None else ""
    if out1.shape != out2.shape:
        raise AssertionError("Expected `func` to return outputs with the same shape when inputs are "
                             f"perturbed {on_index}by {eps}, but got: shapes {out1.shape} and {out2.shape}.")
    if out1.dtype != out2.dtype:
        raise AssertionError("Expected `func` to return outputs with the same dtype when inputs are "
                             f"perturbed {on_index}by {eps}, but got: dtypes {out1.dtype} and {out2.dtype}.")


# ---- numerical derivatives --------------------------------------------------------------------------------


def _central_difference(fn: Callable, inp: Tensor, delta, eps: float, idx=None) -> list:
    """``(f(x + delta) - f(x - delta)) / (2 eps)`` per output (flattened arrays; None for non-tensors).

    ``delta`` is added to ``inp``'s storage in place (at ``idx`` when given, else to the whole tensor)."""
    data = _arr(inp)
    where = idx if idx is not None else Ellipsis
    orig = data[where].copy() if idx is None else data[where]
    data[where] = orig - delta
    outa = _clone_outputs(fn())
    data[where] = orig + delta
    outb = _clone_outputs(fn())
    data[where] = orig
    result = []
    for a, b in zip(outa, outb):
        if not isinstance(a, Tensor):
            result.append(None)
            continue
        _check_same_dtype_and_shape(a, b, eps, idx)
        result.append(((_arr(b) - _arr(a)) / (2 * eps)).reshape(-1))
    return result


def _numerical_jvps(fn: Callable, inp: Tensor, delta, delta_imag, eps: float, idx,
                    is_forward_ad: bool) -> list:
    """Directional derivatives; for a complex input the conjugate Wirtinger derivative ``ds/dx + i ds/dy``."""
    ds_dx = _central_difference(fn, inp, delta, eps, idx)
    if not inp.is_complex():
        if not is_forward_ad and any(d is not None and d.dtype.kind == "c" for d in ds_dx):
            raise AssertionError("Expected ds_dx to be real-valued, not complex.")
        return ds_dx
    ds_dy = _central_difference(fn, inp, delta_imag * 1j, eps, idx)
    return [None if dx is None else dx + dy * 1j for dx, dy in zip(ds_dx, ds_dy)]


def _numerical_jacobian_wrt_input(fn: Callable, inputs: tuple, inp: Tensor, outputs: tuple, eps: float,
                                  is_forward_ad: bool = False) -> list:
    """One Jacobian (input numel x output numel) per output, for the input tensor ``inp``."""
    def call():
        return fn(*inputs)

    numel = _arr(inp).size
    jacobians = []
    for o in outputs:
        if isinstance(o, Tensor):
            dt = _arr(inp).dtype if inp.is_complex() else _arr(o).dtype
            jacobians.append(array_module(_arr(o)).zeros((numel, _arr(o).size), dtype=dt))
        else:
            jacobians.append(None)
    for k, idx in enumerate(np.ndindex(*_arr(inp).shape)):
        cols = _numerical_jvps(call, inp, eps, eps, eps, idx, is_forward_ad)
        for jac, col in zip(jacobians, cols):
            if jac is not None and col is not None:
                jac[k] = col
    return jacobians


def _numerical_jacobian(fn: Callable, inputs: tuple, outputs: tuple | None = None, target=None,
                        eps: float = 1e-3, is_forward_ad: bool = False) -> list:
    """``jacobians[input][output]`` for each input (of ``target``) that requires grad."""
    if outputs is None:
        outputs = _as_tuple(fn(*inputs))
    if not is_forward_ad and any(isinstance(o, Tensor) and o.is_complex() for o in outputs):
        raise ValueError("Expected output to be non-complex. get_numerical_jacobian no longer supports "
                         "functions that return complex outputs.")
    target = inputs if target is None else target
    return [_numerical_jacobian_wrt_input(fn, inputs, t, outputs, eps, is_forward_ad)
            for t in _iter_tensors(target, True)]


def get_numerical_jacobian_wrt_specific_input(fn, input_idx, inputs, outputs, eps, input=None,
                                              is_forward_ad=False) -> tuple:
    inp = inputs[input_idx] if input is None else input
    if not inp.requires_grad:
        raise AssertionError("Expected input to have requires_grad=True")
    return tuple(_tensor(j) for j in _numerical_jacobian_wrt_input(fn, inputs, inp, outputs, eps,
                                                                   is_forward_ad)
                 if j is not None)


def get_numerical_jacobian(fn: Callable, inputs, target=None, eps: float = 1e-3,
                           grad_out: float = 1.0) -> tuple:
    """Deprecated: Jacobians of ``fn(inputs)``'s first output w.r.t. each input (or ``target``)."""
    warnings.warn("`get_numerical_jacobian` was part of PyTorch's private API and not meant to be exposed. "
                  "We are deprecating it and it will be removed in a future version of PyTorch. If you have "
                  "a specific use for this or feature request for this to be a stable API, please file us "
                  "an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer supports values of "
                         "grad_out != 1.0.")

    def fn_pack_inps(*inps):
        return fn(inps)

    jacobians = _numerical_jacobian(fn_pack_inps, _as_tuple(inputs), None, target, eps)
    return tuple(_tensor(per_output[0]) for per_output in jacobians)


# ---- analytical derivatives (backward mode) ---------------------------------------------------------------


def _vjp_rows(output: Tensor, diff_inputs: list, grad_outputs) -> list:
    """``rows[input] = [vjp for each grad_output]`` (None where an input is unused)."""
    rows: list = [[] for _ in diff_inputs]
    for go in grad_outputs:
        grads = _grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)
        for i, g in enumerate(grads):
            rows[i].append(None if g is None else g.detach().clone())
    return rows


def _basis_grad_outputs(output: Tensor):
    xp = array_module(_arr(output))
    n = _arr(output).size
    for j in range(n):
        flat = xp.zeros(n, dtype=_arr(output).dtype)
        flat[j] = 1
        yield _tensor(flat.reshape(_arr(output).shape))


def _stack_rows(rows: list, diff_inputs: list, n_cols: int) -> tuple[list, bool, bool]:
    """Jacobians (input numel x n_cols) from vjp rows; flags for wrong gradient sizes and dtypes."""
    jacobians = []
    sizes_ok = types_ok = True
    for inp, row in zip(diff_inputs, rows):
        xp = array_module(_arr(inp))
        jac = xp.zeros((_arr(inp).size, n_cols), dtype=_arr(inp).dtype)
        for j, g in enumerate(row):
            if g is None:
                continue
            if g.shape != inp.shape:
                sizes_ok = False
            elif g.dtype != inp.dtype:
                types_ok = False
            flat = _arr(g).reshape(-1)
            if flat.size != jac.shape[0]:
                raise AssertionError(f"Expected out_jacobian column to have {flat.size} elements, but got "
                                     f"{jac.shape[0]}")
            jac[:, j] = flat
        jacobians.append(jac)
    return jacobians, sizes_ok, types_ok


def _jacobians_equal(j1: list, j2: list, atol: float) -> bool:
    return all(not a.size or float(array_module(a).abs(a - b).max()) <= atol for a, b in zip(j1, j2))


def _analytical_jacobian_checked(inputs: tuple, output: Tensor, nondet_tol: float, check_grad_dtypes: bool,
                                 v=None) -> list:
    """Backward-mode Jacobians of ``output`` (or ``v^T J`` when ``v`` is given), computed twice."""
    diff_inputs = list(_iter_tensors(inputs, True))
    if v is None:
        n_cols = _arr(output).size
        rows1 = _vjp_rows(output, diff_inputs, _basis_grad_outputs(output))
        rows2 = _vjp_rows(output, diff_inputs, _basis_grad_outputs(output))
    else:
        n_cols = 1
        go = _tensor(v.reshape(_arr(output).shape))
        rows1 = _vjp_rows(output, diff_inputs, [go])
        rows2 = _vjp_rows(output, diff_inputs, [go])
    jac1, sizes_ok, types_ok = _stack_rows(rows1, diff_inputs, n_cols)
    jac2, _, _ = _stack_rows(rows2, diff_inputs, n_cols)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and "
                             "grad_output multiple times gives different values, although analytical "
                             "gradient matches numerical gradient.The tolerance for nondeterminism was "
                             f"{nondet_tol}." + FAILED_NONDET_MSG)
    return jac1


def get_analytical_jacobian(inputs, output: Tensor, nondet_tol: float = 0.0, grad_out: float = 1.0) -> tuple:
    """Deprecated: ``(jacobians, reentrant, correct_grad_sizes, correct_grad_types)`` for one output."""
    warnings.warn("`get_analytical_jacobian` was part of PyTorch's private API and not meant to be exposed. "
                  "We are deprecating it and it will be removed in a future version of PyTorch. If you have "
                  "a specific use for this or feature request for this to be a stable API, please file us "
                  "an issue at https://github.com/pytorch/pytorch/issues/new", FutureWarning, stacklevel=2)
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer supports values of "
                         "grad_out != 1.0.")
    if output.is_complex():
        raise ValueError("Expected output to be non-complex. get_analytical_jacobian no longer supports "
                         "functions that return complex outputs.")
    diff_inputs = list(_iter_tensors(inputs, True))
    n = _arr(output).size
    rows1 = _vjp_rows(output, diff_inputs, _basis_grad_outputs(output))
    rows2 = _vjp_rows(output, diff_inputs, _basis_grad_outputs(output))
    jac1, sizes_ok, types_ok = _stack_rows(rows1, diff_inputs, n)
    jac2, _, _ = _stack_rows(rows2, diff_inputs, n)
    reentrant = _jacobians_equal(jac1, jac2, nondet_tol)
    return tuple(_tensor(j) for j in jac1), reentrant, sizes_ok, types_ok


# ---- analytical derivatives (forward mode) ----------------------------------------------------------------


def _forward_ad_jacobians(fn: Callable, inputs: tuple, outputs: tuple, check_grad_dtypes: bool = False,
                          all_u=None) -> list:
    """``jacobians[input][output]``: rows are output tangents for unit tangents (or for ``u`` if given)."""
    fwAD = _fwad()
    tensor_inputs = [i for i in inputs if isinstance(i, Tensor) and i.requires_grad]
    if any(i.is_complex() for i in tensor_inputs):
        raise ValueError("Expected inputs to be non-complex for _get_analytical_jacobian_forward_ad.")
    float_outputs = [o for o in outputs if _is_float_or_complex(o)]
    jacobians = []
    for i in tensor_inputs:
        rows = 1 if all_u else _arr(i).size
        jacobians.append([array_module(_arr(o)).zeros((rows, _arr(o).size), dtype=_arr(o).dtype)
                          for o in float_outputs])
    with fwAD.dual_level():
        fw_grads, dual_inputs = [], []
        for inp in inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                inp = fwAD.make_dual(inp.detach(), _tg().zeros_like(inp))
                fw_grads.append(fwAD.unpack_dual(inp)[1])
            dual_inputs.append(inp)

        def fill(jacs: list, row: int) -> None:
            raw = _as_tuple(fn(*dual_inputs))
            for jac, d_o in zip(jacs, [o for o in raw if _is_float_or_complex(o)]):
                val, res = fwAD.unpack_dual(d_o)
                if check_grad_dtypes and res is not None and val.is_complex() != res.is_complex():
                    raise GradcheckError("Forward AD gradient has dtype mismatch.")
                jac[row] = 0 if res is None else _arr(res).reshape(-1)

        for i, fw_grad in enumerate(fw_grads):
            data = _arr(fw_grad)
            if all_u:
                data[...] = all_u[i].reshape(data.shape)
                fill(jacobians[i], 0)
                data[...] = 0
                jacobians[i] = [j[0] for j in jacobians[i]]
                continue
            for k, idx in enumerate(np.ndindex(*data.shape)):
                data[idx] = 1
                fill(jacobians[i], k)
                data[idx] = 0
    return jacobians


# ---- mismatch messages ------------------------------------------------------------------------------------


def _notallclose_msg(analytical, numerical, output_idx: int, input_idx: int, complex_indices,
                     test_imag: bool = False,
                     is_forward_ad: bool = False) -> str:
    out_is_complex = (not is_forward_ad) and complex_indices and output_idx in complex_indices
    inp_is_complex = is_forward_ad and complex_indices and input_idx in complex_indices
    part = "imaginary" if test_imag else "real"
    element = "inputs" if is_forward_ad else "outputs"
    prefix = ""
    if out_is_complex or inp_is_complex:
        prefix = f"While considering the {part} part of complex {element} only, "
    mode = "computed with forward mode " if is_forward_ad else ""
    return (prefix + f"Jacobian {mode}mismatch for output {output_idx:d} with respect to input "
                     f"{input_idx:d},\nnumerical:{_fmt(numerical)}\nanalytical:{_fmt(analytical)}\n")


# ---- slow and fast checks ---------------------------------------------------------------------------------


def _check_no_differentiable_outputs(fn, inputs, func_out, eps, is_forward_ad) -> None:
    for per_input in _numerical_jacobian(fn, inputs, _as_tuple(func_out), eps=eps,
                                         is_forward_ad=is_forward_ad):
        for jac in per_input:
            if jac is not None and bool((jac != 0).any()):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *,
                    use_forward_ad=False, complex_indices=None, test_imag=False, masked=False) -> bool:
    func_out = _as_tuple(func_out)
    if not outputs:
        _check_no_differentiable_outputs(fn, inputs, func_out, eps, use_forward_ad)
        return True
    numerical = list(zip(*_numerical_jacobian(fn, inputs, func_out, eps=eps, is_forward_ad=use_forward_ad)))
    numerical = [nj for o, nj in zip(func_out, numerical) if isinstance(o, Tensor) and o.requires_grad]
    if use_forward_ad:
        analytical = _forward_ad_jacobians(fn, inputs, func_out, check_grad_dtypes=check_grad_dtypes)
        for i, n_per_out in enumerate(numerical):
            for j, n in enumerate(n_per_out):
                a = analytical[j][i]
                if not _allclose(a, n, rtol, atol):
                    raise GradcheckError(_notallclose_msg(a, n, i, j, complex_indices, test_imag, True))
        return True
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian_checked(inputs, o, nondet_tol, check_grad_dtypes)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j, complex_indices, test_imag))
    return True


def _adjusted_atol(atol: float, u, v) -> float:
    # Comparing v^T A u with v^T B u: the element-wise tolerance scales by sum(u) * sum(v). For a complex
    # input u is (u_real, u_imag) and, as in PyTorch, only u_real's sum scales the tolerance.
    sum_v = 1.0 if v is None else float(v.sum())
    u = u[0] if isinstance(u, tuple) else u
    return atol * float(u.sum()) * sum_v


def _fast_gradcheck(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol, *,
                    use_forward_ad=False, complex_indices=None, test_imag=False, masked=False) -> bool:
    func_out = _as_tuple(func_out)
    inp_idx = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    inp_tensors = [inputs[i] for i in inp_idx]
    generator = _tg().Generator()  # (a fresh one: its default seed, PyTorch's, whatever the user's state)
    all_u = []
    for inp in inp_tensors:
        ur = _random_vec(inp, generator, True)
        all_u.append((ur, _random_vec(inp, generator, True)) if inp.is_complex() else ur)
    all_v = None if use_forward_ad else [_random_vec(o, generator) for o in outputs]

    def call():
        return fn(*inputs)

    numerical = []  # numerical[input][output]: J u (forward) or v^T J u (backward)
    all_ju = []
    for inp, u in zip(inp_tensors, all_u):
        ur, ui = u if isinstance(u, tuple) else (u, u)
        shape = _arr(inp).shape
        jus = _numerical_jvps(call, inp, ur.reshape(shape) * eps, ui.reshape(shape) * eps, eps, None,
                              use_forward_ad)
        jus = [ju for ju, o in zip(jus, func_out) if _is_float_or_complex(o)]
        all_ju.append(jus)
        if all_v is None:
            numerical.append(jus)
        else:
            numerical.append([(v * ju).sum() for v, ju in zip(all_v, jus)])
    if use_forward_ad:
        analytical = _forward_ad_jacobians(fn, inputs, func_out, all_u=all_u,
                                           check_grad_dtypes=check_grad_dtypes)
    else:
        if not outputs:
            for jus in all_ju:
                for ju in jus:
                    if ju.size and float(array_module(ju).abs(ju).max()) > nondet_tol:
                        raise GradcheckError("Numerical gradient for function expected to be zero")
        analytical = []  # analytical[output][input]
        for o, v in zip(outputs, all_v):
            vjs = _analytical_jacobian_checked(inputs, o, nondet_tol, check_grad_dtypes, v=v)
            scalars = []
            for vj, u in zip(vjs, all_u):
                vj = vj[:, 0]
                if vj.dtype.kind == "c":
                    scalars.append((vj.real * u[0]).sum() + 1j * (vj.imag * u[1]).sum())
                else:
                    scalars.append((vj * u).sum())
            analytical.append(scalars)
    for i, per_input in enumerate(numerical):
        for j, n in enumerate(per_input):
            a = analytical[i][j] if use_forward_ad else analytical[j][i]
            xp = array_module(n)
            a, n = xp.asarray(a), xp.asarray(n)
            tol = _adjusted_atol(atol, all_u[i], all_v[j] if all_v else None)
            if not _allclose(a, n, rtol, tol):
                raise GradcheckError(_notallclose_msg(a, n, j, i, complex_indices, test_imag, use_forward_ad)
                                     + _slow_mode_report(fn, inputs, func_out, i, j, rtol, atol, eps,
                                                         use_forward_ad))
    return True


def _slow_mode_report(fn, inputs, func_out, input_idx, output_idx, rtol, atol, eps, is_forward_ad) -> str:
    """The slow-mode Jacobians of the failing pair, for the error message."""
    try:
        slow_n = _numerical_jacobian(fn, inputs, func_out, eps=eps, is_forward_ad=is_forward_ad)[input_idx]
        slow_n = [j for j, o in zip(slow_n, func_out) if _is_float_or_complex(o)][output_idx]
        if is_forward_ad:
            slow_a = _forward_ad_jacobians(fn, inputs, func_out)[input_idx][output_idx]
        else:
            outs = _differentiable_outputs(func_out)
            slow_a = _analytical_jacobian_checked(inputs, outs[output_idx], float("inf"), False)[input_idx]
    except Exception:  # the report is best effort; the failure itself is what matters
        return ""
    xp = array_module(slow_n)
    max_diff = float(xp.abs(xp.asarray(slow_n) - xp.asarray(slow_a)).max()) if slow_n.size else 0.0
    msg = ("\nThe above quantities relating the numerical and analytical jacobians are computed \nin fast "
           "mode. See: https://github.com/pytorch/pytorch/issues/53876 for more background \nabout fast "
           "mode. Below, we recompute numerical and analytical jacobians in slow mode:\n\nNumerical:\n "
           f"{_fmt(slow_n)}\nAnalytical:\n{_fmt(slow_a)}\n\nThe max per-element difference "
           f"(slow mode) is: {max_diff}.\n")
    if _allclose(xp.asarray(slow_a), slow_n, rtol, atol):
        msg += ("\nFast gradcheck failed but element-wise differences are small. This means that the\ntest "
                "might've passed in slow_mode!\n")
    return msg


# ---- complex functions as pairs of real ones --------------------------------------------------------------


def _real_and_imag_output(fn: Callable):
    tg = _tg()

    def apply_to_complex_outputs(fn_to_apply):
        def wrapped(*inputs):
            return tuple(fn_to_apply(o) if isinstance(o, Tensor) and o.is_complex() else o
                         for o in _as_tuple(fn(*inputs)))

        return wrapped

    return apply_to_complex_outputs(tg.real), apply_to_complex_outputs(tg.imag)


def _real_and_imag_input(fn: Callable, complex_idx: list, tupled_inputs: tuple):
    def apply_to_complex_inputs(fn_to_apply):
        def wrapped(*inputs):
            new_inputs = list(inputs)
            for k in complex_idx:
                new_inputs[k] = fn_to_apply(new_inputs[k], tupled_inputs[k])
            return _as_tuple(fn(*new_inputs))

        return wrapped

    real_fn = apply_to_complex_inputs(lambda inp, orig: inp + orig.imag * 1j)
    imag_fn = apply_to_complex_inputs(lambda inp, orig: orig.real + inp * 1j)
    return real_fn, imag_fn


def _gradcheck_real_imag(check, fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         check_forward_ad,
                         check_backward_ad, nondet_tol, check_undefined_grad) -> None:
    complex_out_idx = [i for i, o in enumerate(outputs) if o.is_complex()]
    if check_backward_ad:
        if any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(func_out)):
            real_fn, imag_fn = _real_and_imag_output(fn)
            imag_out = imag_fn(*inputs)
            check(imag_fn, imag_out, inputs, _differentiable_outputs(imag_out), eps, rtol, atol,
                  check_grad_dtypes,
                  nondet_tol, complex_indices=complex_out_idx, test_imag=True)
            real_out = real_fn(*inputs)
            check(real_fn, real_out, inputs, _differentiable_outputs(real_out), eps, rtol, atol,
                  check_grad_dtypes,
                  nondet_tol, complex_indices=complex_out_idx)
        else:
            check(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol)
    if not check_forward_ad:
        return
    complex_inp_idx = [i for i, inp in enumerate(inputs) if isinstance(inp, Tensor) and inp.is_complex()]
    if not complex_inp_idx:
        check(fn, func_out, inputs, outputs, eps, rtol, atol, check_grad_dtypes, nondet_tol,
              use_forward_ad=True)
        if check_undefined_grad:
            _test_undefined_forward_mode(fn, outputs, inputs)
        return
    real_fn, imag_fn = _real_and_imag_input(fn, complex_inp_idx, inputs)
    imag_inputs = tuple(_detached_part(inp, "imag") if isinstance(inp, Tensor) and inp.is_complex() else inp
                        for inp in inputs)
    imag_out = imag_fn(*imag_inputs)
    check(imag_fn, imag_out, imag_inputs, _differentiable_outputs(imag_out), eps, rtol, atol,
          check_grad_dtypes,
          nondet_tol, complex_indices=complex_inp_idx, test_imag=True, use_forward_ad=True)
    real_inputs = tuple(_detached_part(inp, "real") if isinstance(inp, Tensor) and inp.is_complex() else inp
                        for inp in inputs)
    real_out = real_fn(*real_inputs)
    check(real_fn, real_out, real_inputs, _differentiable_outputs(real_out), eps, rtol, atol,
          check_grad_dtypes,
          nondet_tol, complex_indices=complex_inp_idx, use_forward_ad=True)
    if check_undefined_grad:
        _test_undefined_forward_mode(imag_fn, imag_out, imag_inputs)
        _test_undefined_forward_mode(real_fn, real_out, real_inputs)


def _detached_part(inp: Tensor, part: str) -> Tensor:
    """``inp.real`` / ``inp.imag`` as a fresh contiguous leaf that requires grad (so it can be perturbed)."""
    arr = _arr(inp)
    out = _tensor(array_module(arr).ascontiguousarray(arr.real if part == "real" else arr.imag))
    return out.requires_grad_(inp.requires_grad)


# ---- extra backward / forward checks ----------------------------------------------------------------------


def _test_backward_mul_by_grad_output(outputs: tuple, inputs: tuple) -> None:
    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    tg = _tg()
    grads = _grad(outputs, diff_inputs, [tg.zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads, diff_inputs):
        if gi is None:
            continue
        if bool((_arr(gi) != 0).any()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.device != di.device:
            raise GradcheckError("grad is incorrect device")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")


def _undefined_grad(t: Tensor) -> Tensor:
    """An alias of ``t`` whose backward sends an undefined (None) gradient (PyTorch's UndefinedGrad)."""
    from .function import Function

    class UndefinedGrad(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return None

    return UndefinedGrad.apply(t)


def _test_undefined_backward_mode(fn: Callable, outputs: tuple, inputs: tuple) -> None:
    diff_inputs = list(_iter_tensors(inputs, True))
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    tg = _tg()

    def warn_bc_breaking() -> None:
        warnings.warn("Backwards compatibility: New undefined gradient support checking feature is enabled "
                      "by default, but it may break existing callers of this function. If this is true for "
                      'you, you can call this function with "check_undefined_grad=False" to disable the '
                      "feature", UserWarning,
                      stacklevel=5)

    def check(outs: list) -> None:
        try:
            grads = _grad(outs, diff_inputs, [tg.zeros_like(o) for o in outs], allow_unused=True)
        except RuntimeError as e:
            warn_bc_breaking()
            raise GradcheckError('Expected backward function to handle undefined output grads. Please look '
                                 'at "Notes about undefined output gradients" in '
                                 '"tools/autograd/derivatives.yaml"') from e
        for gi in grads:
            if gi is not None and bool((_arr(gi) != 0).any()):
                warn_bc_breaking()
                raise GradcheckError('Expected all input grads to be undefined or zero when all output '
                                     'grads are undefined or zero. Please look at "Notes about undefined '
                                     'output gradients" in "tools/autograd/derivatives.yaml"')

    all_undefined = [_undefined_grad(o) for o in _differentiable_outputs(fn(*inputs)) if isinstance(o,
                                                                                                    Tensor)]
    to_check = [all_undefined]
    if len(all_undefined) > 1:
        for k in range(len(outputs)):
            outs = _differentiable_outputs(fn(*inputs))
            to_check.append([_undefined_grad(o) if idx == k else o for idx, o in enumerate(outs)])
    for outs in to_check:
        check(outs)


def _test_undefined_forward_mode(fn: Callable, outputs: tuple, inputs: tuple) -> None:
    """A zero tangent and no tangent at all must give the same output tangents."""
    fwAD = _fwad()
    tg = _tg()
    with fwAD.dual_level():
        dual_inputs, diff_idx = [], []
        for i, inp in enumerate(inputs):
            if isinstance(inp, Tensor) and inp.requires_grad:
                inp = fwAD.make_dual(inp.detach(), tg.zeros_like(inp))
                diff_idx.append(i)
            dual_inputs.append(inp)
        for idx in diff_idx:
            saved = dual_inputs[idx]
            dual_inputs[idx] = fwAD.make_dual(inputs[idx].detach(), tg.zeros_like(inputs[idx]))
            out1 = [o for o in _as_tuple(fn(*dual_inputs)) if _is_float_or_complex(o)]
            dual_inputs[idx] = inputs[idx].detach()
            out2 = [o for o in _as_tuple(fn(*dual_inputs)) if _is_float_or_complex(o)]
            dual_inputs[idx] = saved
            for index_o, (d1, d2) in enumerate(zip(out1, out2)):
                res1 = fwAD.unpack_dual(d1).tangent
                res2 = fwAD.unpack_dual(d2).tangent
                if res1 is not None and res2 is not None and not _allclose(_arr(res1), _arr(res2), 1e-5,
                                                                           1e-8):
                    raise GradcheckError(f"Mismatch in tangent values for output with index: {index_o} when "
                                         f"input: {inputs[idx]} has an undefined tangent value.  Got: {res1} "
                                         f"but expected: {res2}")


def _test_batched_grad(inputs: tuple, output: Tensor, output_idx: int) -> None:
    """``autograd.grad(..., is_grads_batched=True)`` must equal one backward per grad_output."""
    tg = _tg()
    diff_inputs = list(_iter_tensors(inputs, True))
    grad_outputs = [tg.randn_like(output) for _ in range(2)]  # (from the user's generator, as PyTorch's)

    def vjp(v):
        res = _grad(output, diff_inputs, v, retain_graph=True, allow_unused=True)
        return [g if g is not None else tg.zeros_like(inp) for g, inp in zip(res, diff_inputs)]

    expected = [tg.stack(shards) for shards in zip(*[vjp(go) for go in grad_outputs])]
    try:
        result = _grad(output, diff_inputs, tg.stack(grad_outputs), retain_graph=True, allow_unused=True,
                       is_grads_batched=True)
    except RuntimeError as ex:
        raise GradcheckError(f"While computing batched gradients, got: {ex}") from ex
    for input_idx, (res, exp) in enumerate(zip(result, expected)):
        res = tg.zeros_like(exp) if res is None else res
        if not _allclose(_arr(res), _arr(exp), 1e-5, 1e-8):
            raise GradcheckError(f"For output {output_idx} and input {input_idx}:\n\ngradcheck or "
                                 "gradgradcheck failed while testing batched gradient computation.\nGot: "
                                 f"{res}\n\nExpected:\n{exp}")


def _test_batched_grad_forward_ad(fn: Callable, inputs: tuple) -> None:
    """Tangents pushed one at a time and as a batch (with ``tracegrad.func.vmap`` when available) agree."""
    fwAD = _fwad()
    tg = _tg()
    vmap = getattr(getattr(tg, "func", None), "vmap", None)
    for input_idx, current in enumerate(inputs):
        if not (_is_float_or_complex(current) and current.requires_grad):
            continue

        def jvp(tangent, input_idx=input_idx, current=current):
            with fwAD.dual_level():
                dual = fwAD.make_dual(current.detach(), tangent)
                args = tuple(dual if k == input_idx else (a.detach() if isinstance(a, Tensor) else a)
                             for k, a in enumerate(inputs))
                ret = []
                for out in _as_tuple(fn(*args)):
                    if out is None:
                        continue
                    primal, tangent_out = fwAD.unpack_dual(out)
                    ret.append(tangent_out if tangent_out is not None else tg.zeros_like(primal))
                return tuple(ret)

        tangents = [tg.randn_like(current) for _ in range(2)]
        expected = [tg.stack(shards) for shards in zip(*[jvp(t) for t in tangents])]
        if vmap is None:
            continue  # no batching transform to compare against
        try:
            result = vmap(jvp)(tg.stack(tangents))
        except RuntimeError as ex:
            raise GradcheckError(f"While computing batched gradients, got: {ex}") from ex
        for res, exp in zip(result, expected):
            if not _allclose(_arr(res), _arr(exp), 1e-5, 1e-8):
                raise GradcheckError(f"For output {input_idx} and input {input_idx}:\n\ngradcheck failed "
                                     "while testing batched gradient computation with forward-mode "
                                     f"AD.\nGot: {res}\n\nExpected:\n{exp}")


# ---- public entry points ----------------------------------------------------------------------------------


def gradcheck(func: Callable[..., Any], inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check analytical gradients of ``func`` at ``inputs`` against finite differences."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
                                 check_grad_dtypes, check_batched_grad, check_batched_forward_grad,
                                 check_forward_ad, check_backward_ad, fast_mode, masked)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes,
                      check_batched_grad, check_batched_forward_grad, check_forward_ad, check_backward_ad,
                      fast_mode, masked) -> bool:
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    _gradcheck_real_imag(check, func, func_out, tupled_inputs, outputs, eps, rtol, atol, check_grad_dtypes,
                         check_forward_ad, check_backward_ad, nondet_tol, check_undefined_grad)
    if check_batched_forward_grad:
        _test_batched_grad_forward_ad(func, tupled_inputs)
    if not check_backward_ad:
        return True
    if check_batched_grad:
        for i, o in enumerate(outputs):
            _test_batched_grad(tupled_inputs, o, i)
    _test_backward_mul_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def _random_grad_output(x: Tensor, noncontiguous: bool) -> Tensor:
    """PyTorch's: ``make_tensor`` of ``x``'s shape, values in [-1, 1) (double for non-floating outputs), requiring
    grad, drawn from the user's generator."""
    tg = _tg()
    dtype = x.dtype if x.is_floating_point() or x.is_complex() else tg.float64
    return tg.testing.make_tensor(tuple(x.shape), dtype=dtype, device=x.device, low=-1, high=1,
                                  requires_grad=True, noncontiguous=noncontiguous)


def gradgradcheck(func: Callable[..., Any], inputs, grad_outputs=None, *, eps: float = 1e-6,
                  atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """gradcheck of ``(inputs, grad_outputs) -> autograd.grad(func(inputs), inputs, grad_outputs)``."""
    from .api import grad

    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(_random_grad_output(x, gen_non_contig_grad_outputs) for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_idx = {i for i, x in enumerate(tupled_inputs) if isinstance(x, Tensor) and x.requires_grad}
    diff_grad_output_idx = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_idx else x
                           for i, x in enumerate(args[:len(args) - num_outputs]))
        outs = _differentiable_outputs(func(*input_args))
        gos = tuple(x.requires_grad_() if i in diff_grad_output_idx else x
                    for i, x in enumerate(args[len(args) - num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_idx)
        grad_inputs = grad(outs, diff_input_args, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
                     check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
