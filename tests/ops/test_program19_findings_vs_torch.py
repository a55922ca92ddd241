"""Differences that the programs of ``tests/test_user_programs19_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch (the outcome and the warnings shown).

- ``torch.stack``/``cat``/``concat``/``vstack``/... of plain lists (``torch.stack([[1, 2], [3, 4]])``), of a
  list beside a tensor, or of NumPy scalars built a tensor; torch's parser refuses every element that is no tensor
  ("expected Tensor as element 0 in argument 0, but got list");
- a generator, a dict's values, a range or a deque given for a list of tensors was taken (``torch.stack(t * 2 for
  t in params)`` even lost the gradient: the generator was used up before its tensors were looked at); torch
  refuses them ("stack(): argument 'tensors' (position 1) must be tuple of Tensors, not generator");
- ``torch.meshgrid`` and ``torch.chain_matmul`` of non-tensors warned (indexing, deprecation) before the parser's
  refusal; torch refuses first, without a warning;
- the named tuples of ``torch.max(x, 1)`` and friends were named ``'max'`` in Python's own messages
  ("'max' object has no attribute 'item'", "bad operand type for unary -: 'max'"); torch's are C structseqs named
  ``torch.return_types.max`` there, while their ``__name__`` is ``max``;
- an optimizer's own ``step`` marked it as stepped, so an LR scheduler made after some steps (a warmup by hand)
  and stepped before the optimizer did not warn; in torch only the scheduler's wrapper marks it, and it warns.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest
from _lib import tg, torch
from _mistakes_lib import outcome, same

_NOT_TENSORS_IN_LISTS = {
    "stack_lists": lambda L: L.stack([[1, 2], [3, 4]]),
    "stack_tensor_and_list": lambda L: L.stack([L.ones(2), [1.0, 2.0]]),
    "stack_numpy_scalars": lambda L: L.stack([np.float64(1.0), np.float64(2.0)]),
    "stack_keyword": lambda L: L.stack(tensors=[[1.0], [2.0]]),
    "cat_lists": lambda L: L.cat([[1, 2], [3]]),
    "cat_tensor_and_tuple": lambda L: L.cat((L.ones(2), (1.0,))),
    "concat_lists": lambda L: L.concat([[1.0], [2.0]]),
    "vstack_lists": lambda L: L.vstack([[1, 2], [3, 4]]),
    "stack_out_lists": lambda L: L.stack([[1.0], [2.0]], out=L.empty(2, 1)),
    "stack_generator": lambda L: L.stack(t for t in [L.ones(2), L.ones(2)]),
    "cat_dict_values": lambda L: L.cat({"a": L.ones(2), "b": L.zeros(1)}.values()),
    "cat_deque": lambda L: L.cat(collections.deque([L.ones(2)])),
    "index_select_range": lambda L: L.ones(3).index_select(0, range(2)),
    "meshgrid_lists": lambda L: L.meshgrid([1, 2], [3, 4]),
    "meshgrid_numbers": lambda L: L.meshgrid(1.0, L.ones(2)),
    "chain_matmul_lists": lambda L: L.chain_matmul([[1.0]], [[2.0]]),
    "stack_tensors": lambda L: L.stack([L.ones(2), L.zeros(2)]),
    "cat_tuple_of_tensors": lambda L: L.cat((L.ones(2), L.zeros(1))),
    "stack_return_type": lambda L: L.stack(L.max(L.ones(2, 3), 1)),
}


@pytest.mark.parametrize("case", _NOT_TENSORS_IN_LISTS, ids=str)
def test_lists_of_tensors_take_only_tensors_as_torch(case):
    program = _NOT_TENSORS_IN_LISTS[case]
    ours, theirs = outcome(tg, program), outcome(torch, program)
    assert same(ours, theirs), (ours, theirs)


def _stacked_by_generator(lib):
    w = lib.ones(2, requires_grad=True)
    try:
        return lib.stack(t * 2 for t in [w, w])
    except TypeError as error:
        return str(error)


def test_stack_of_a_generator_keeps_no_tensor_without_history():
    # (tracegrad's stack used to take the generator, and its result did not require grad)
    assert _stacked_by_generator(tg) == _stacked_by_generator(torch)


_RETURN_TYPE_MISUSES = {
    "item": lambda r: r.item(),
    "eq": lambda r: r.eq(1),
    "shape": lambda r: r.shape,
    "set_attribute": lambda r: setattr(r, "grad", None),
    "negate": lambda r: -r,
    "abs": lambda r: abs(r),
    "compare": lambda r: r < 1,
    "float": lambda r: float(r),
    "tensor_plus": lambda r: torch_like(r).ones(2) + r,
    "matmul": lambda r: r @ r,
}


def torch_like(r):
    """The library that made the named tuple ``r``."""
    return tg if isinstance(r.values, tg.Tensor) else torch


def _misused(lib, misuse):
    r = lib.max(lib.arange(6.0).view(2, 3), 1)
    try:
        misuse(r)
    except (AttributeError, TypeError) as error:
        return type(error).__name__, str(error)
    return None


@pytest.mark.parametrize("case", _RETURN_TYPE_MISUSES, ids=str)
def test_return_types_are_named_as_torch_in_python_messages(case):
    misuse = _RETURN_TYPE_MISUSES[case]
    assert _misused(tg, misuse) == _misused(torch, misuse)


@pytest.mark.parametrize("name", ["max", "sort", "topk", "linalg_qr", "max_out"])
def test_return_types_keep_their_bare_names(name):
    ours, theirs = getattr(tg.return_types, name), getattr(torch.return_types, name)
    assert (ours.__name__, ours.__qualname__, ours.__module__) == (theirs.__name__, theirs.__qualname__,
                                                                   theirs.__module__)
    assert repr(ours) == repr(theirs)


def _warmup_then_scheduler(lib, optimizer_steps_after: int):
    """A warmup of two optimizer steps by hand, then a scheduler made and stepped (after ``optimizer_steps_after``
    more optimizer steps): the scheduler's warnings and the learning rate."""
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1)
    for _ in range(2):
        p.grad = lib.ones(2)
        opt.step()
    sched = lib.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(optimizer_steps_after):
        opt.step()
    sched.step()
    return opt.param_groups[0]["lr"]


@pytest.mark.parametrize("optimizer_steps_after", [0, 1])
def test_scheduler_after_a_warmup_warns_as_torch(optimizer_steps_after):
    def program(lib):
        return _warmup_then_scheduler(lib, optimizer_steps_after)

    ours, theirs = outcome(tg, program), outcome(torch, program)
    assert same(ours, theirs), (ours, theirs)


def test_scheduler_sees_steps_of_an_optimizer_with_hooks():
    def program(lib):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1)
        opt.register_step_pre_hook(lambda *args: None)
        p.grad = lib.ones(2)
        opt.step()
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, 0.5)
        sched.step()
        opt.step()
        sched.step()
        return opt.param_groups[0]["lr"]

    ours, theirs = outcome(tg, program), outcome(torch, program)
    assert same(ours, theirs), (ours, theirs)
