"""Forward-mode AD of ``torch._foreach_*`` (``ops/foreach.py``), as PyTorch's generated code computes it.

- An out-of-place overload gives each tensor the tangent of its per-tensor operator's formula (``jvp``), skipping the
  tensors none of whose inputs has a tangent; ``_foreach_maximum``/``_foreach_minimum`` with numbers and
  ``_foreach_norm`` have formulas of their own in PyTorch's ``derivatives.yaml`` (see below).
- An in-place overload (``write_with_tangents``) runs in PyTorch's order: each tensor's ``self`` cloned where its
  formula reads the value before the write (``original_selfs``), then every write, then each tensor's formula in turn,
  which reads the other inputs as they are by then (written, where a list repeats a tensor or crosses another list)
  and writes its result into the tangent ``self`` has; the tensors that had none get theirs once every formula ran.
- Overloads without a forward formula refuse a tangent with PyTorch's words (``refusals``).
"""

from __future__ import annotations

from collections.abc import Callable

from .._state import STATE
from .._tensor import Tensor
from ..autograd import forward_ad as _fwad
from .registry import OpDef

# PyTorch's words for an overload whose derivative has no forward formula (its jit-decomposition fallback) and for
# one that has no derivative at all (its autograd fallback), both before the kernel runs
_NO_DECOMPOSITION = ("_foreach_pow.ScalarAndTensor", "_foreach_mm")


def refusal(op: OpDef, derivative: bool) -> str | None:
    """What PyTorch says, before its kernel runs, when an input of the out-of-place overload ``op`` has a tangent:
    None where it computes tangents."""
    if not derivative:
        return f"Trying to use forward AD with aten::{op.name} that does not support it."
    if op.schema.full_name in _NO_DECOMPOSITION:
        return _fwad._NOT_IMPLEMENTED.format(op.name)
    return None


# ---- out-of-place overloads -------------------------------------------------------------------------------------


def foreach_jvp(args: tuple, outs: tuple, tangents: tuple, op) -> list:
    """The tangents of an out-of-place foreach call: each tensor's by its formula, None where no input of it has
    one (``op`` is the ``ForeachOp``; ``tangents`` are flattened as its edges)."""
    each = op._each(args)
    formula = _FORMULAS.get(op.schema.full_name, _per_tensor_tangent)
    result = []
    for k, edges in enumerate(op._edge_positions(len(each))):
        own = [tangents[e] for e in edges]
        result.append(None if all(t is None for t in own) else formula(op.per, each[k], outs[k], own))
    return result


def _per_tensor_tangent(per: OpDef, args: tuple, out: Tensor, tangents: list) -> Tensor | None:
    """The per-tensor operator's tangent (its rule, or the one derived from its backward rule)."""
    inputs = [args[i] for i in per.diff_idx]
    return _fwad._rule_tangents(per, args, (out,), inputs, tangents, None)[0]


def _extremum_with_number(greater: bool) -> Callable:
    """PyTorch's formula of ``_foreach_maximum``/``_foreach_minimum`` with a number (``derivatives.yaml``; its
    reference operators take no number): ``scalar + where(self == scalar, 0.5, self > scalar) * (self_t - scalar)``,
    which gives ``scalar`` itself where ``self`` is clamped, and rounds ``self_t`` through the difference."""

    def formula(per: OpDef, args: tuple, out: Tensor, tangents: list) -> Tensor:
        from .. import eq, gt, lt, scalar_tensor, where
        from .pointwise import add, mul, sub

        self_p, scalar = args[0], args[1]
        chosen = (gt if greater else lt)(self_p, scalar).to(out.dtype)
        weight = where(eq(self_p, scalar), scalar_tensor(0.5, dtype=out.dtype), chosen)
        return add(mul(weight, sub(tangents[0], scalar)), scalar)

    return formula


def _norm_tangent(per: OpDef, args: tuple, out: Tensor, tangents: list) -> Tensor:
    """``norm_jvp(self_p, self_t, ord, result)``, PyTorch's formula: the norm over every dimension kept (size 1), so
    that for a tensor of a dimension or more PyTorch refuses its own tangent, but for the zero norm's zeros."""
    x, ord = args[0], args[1]
    if x.dim() and ord != 0:
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size [] while the given forward gradient is "
                           f"of size [{', '.join(['1'] * x.dim())}].")
    return _per_tensor_tangent(per, args, out, tangents)


_FORMULAS = {
    "_foreach_maximum.Scalar": _extremum_with_number(True), "_foreach_maximum.ScalarList": _extremum_with_number(True),
    "_foreach_minimum.Scalar": _extremum_with_number(False),
    "_foreach_minimum.ScalarList": _extremum_with_number(False),
    "_foreach_norm.Scalar": _norm_tangent,
}


# ---- in-place overloads ----------------------------------------------------------------------------------------

# PyTorch's internal assertions where a tensor that had no tangent gets a second one from the same call (a list
# that repeats it, or views of one base): its setter refuses to replace a tangent
_SET_TWICE = ('fw_grad_->value(level).is_same(new_grad_base) INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/'
              'csrc/autograd/autograd_meta.cpp":183, please report a bug to PyTorch. Cannot set a value of a forward '
              'grad if it already exists. Inplace operations should modify it inplace.')
_VIEW_SET_TWICE = ('!this_view_meta->has_fw_view() INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/torch/csrc/'
                   'autograd/autograd_meta.cpp":257, please report a bug to PyTorch. Expected the output of forward '
                   'differentiable view operations to have the tangent have the same layout as primal')


def write_with_tangents(op, given: tuple, each: list[tuple], write: Callable[[], None]) -> None:
    """An in-place foreach call of ``op`` (a ``ForeachInplaceOp``) while a dual level is active: ``write()`` does the
    writes (and their autograd history), ``each`` holds each tensor's per-tensor arguments."""
    level = STATE.fw_grad_levels[-1]
    per = op.per_inplace
    inputs = [_fwad._diff_inputs(per, one) for one in each]
    dual = [any(_fwad.get_tangent(a, level) is not None for a in ins if isinstance(a, Tensor)) for ins in inputs]
    if not op.derivative:
        _write_then_refuse(op, given, write, level)
        return
    if not any(dual) or not _fwad._reaches_autograd(op, given):
        with _fwad.fw_disabled():
            write()
        return
    reads_original = _reads_original_self(per)
    originals = [_fwad._old_value(one[0]) if d else None for one, d in zip(each, dual)]
    first_tangents = [_tangent_before(one[0], level) if d and reads_original else None for one, d in zip(each, dual)]
    with _fwad.fw_disabled():
        write()
        pending = []
        for one, ins, d, original, first in zip(each, inputs, dual, originals, first_tangents):
            if not d:
                continue
            tangents = [_fwad.get_tangent(a, level) if isinstance(a, Tensor) else None for a in ins]
            if reads_original:
                tangents[0] = first  # (``original_self_t``: the tangent before any write)
            target = one[0]
            new = _fwad._compute_tangents(per, one, (target,), ins, tangents, original)[0]
            if new is not None and _fwad.get_tangent(target, level) is not None:
                _fwad.give_tangent(target, new, level, True)  # (``self_t.copy_(...)``, seen by the next formulas)
            else:
                pending.append((target, new))
    for target, new in pending:  # (as PyTorch's setters, once every formula ran)
        if new is not None and _fwad.get_tangent(target, level) is not None:
            raise RuntimeError(_VIEW_SET_TWICE if _fwad.forward_base(target)[0] is not None else _SET_TWICE)
        _fwad.give_tangent(target, new, level, True)


def _write_then_refuse(op, given: tuple, write: Callable[[], None], level: int) -> None:
    """An in-place overload without a derivative: PyTorch writes, then refuses any input with a tangent."""
    with _fwad.fw_disabled():
        write()
    tensors = [t for a in given for t in (a if isinstance(a, (list, tuple)) else [a]) if isinstance(t, Tensor)]
    if any(_fwad.get_tangent(t, level) is not None for t in tensors) and _fwad._reaches_autograd(op, given):
        raise NotImplementedError(_fwad._NO_INPLACE_FORMULA.format(op.name))


def _reads_original_self(per: OpDef) -> bool:
    """Whether PyTorch's forward formula of the in-place operator ``per`` reads ``self`` as it was before the write
    (``original_self_p``/``original_self_t``), as its backward does where it saves ``self``; div's reads ``result``."""
    return ("arg", 0) in per.save_spec and per.schema.name != "div_"


def _tangent_before(t: Tensor, level: int) -> Tensor | None:
    """``t``'s tangent now, kept apart from the writes into it that follow (``original_self``'s, a clone's)."""
    tangent = _fwad.get_tangent(t, level)
    if tangent is None:
        return None
    from .creation import clone

    with _fwad.fw_disabled():
        return clone(tangent)
