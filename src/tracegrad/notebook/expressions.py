"""Evaluating a magic's EXPR in the user namespace, with one-line errors instead of tracebacks.

A magic's argument is the user's code, so everything that can go wrong with it (a typo, an undefined name,
a value that is not a tensor, a tensor with no graph) is a :class:`UsageError` naming the problem in one
line, not a traceback through tracegrad's internals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from IPython.core.error import UsageError

from .._tensor import Tensor
from ..autograd.graph import GradientEdge, Node
from .protocol import describe_exception

Roots = Any  # what the viz snapshots accept: a tensor, a node, an edge, a sequence or a label -> tensor mapping


def evaluate_roots(shell: Any, expr: str, magic: str) -> Roots:
    """Evaluate ``expr`` in ``shell``'s user namespace and check that it names something with a backward graph."""
    expr = expr.strip()
    if not expr:
        raise UsageError(f"%{magic}: missing EXPR, a tensor expression (e.g. %{magic} loss)")
    try:
        value = shell.ev(expr)
    except SyntaxError as exc:
        raise UsageError(f"%{magic}: invalid syntax in {expr!r}: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - whatever the user's expression raises becomes one line
        raise UsageError(f"%{magic}: evaluating {expr!r} raised {describe_exception(exc)}") from None
    problem = _root_problem(value)
    if problem:
        raise UsageError(f"%{magic}: {expr!r} {problem}")
    return value


def _root_problem(value: Any) -> str | None:
    """Why ``value`` cannot be drawn as a backward graph, or None if it can."""
    if isinstance(value, Mapping):
        items = list(value.values())
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes, GradientEdge)):
        items = list(value)
    else:
        problem = _single_root_problem(value)
        return f"is {problem}" if problem else None
    if not items:
        return "is empty: give at least one tensor"
    problems = (_single_root_problem(item) for item in items)
    problem = next((p for p in problems if p), None)
    return f"holds an item that is {problem}" if problem else None


def _single_root_problem(value: Any) -> str | None:
    """What ``value`` is, when it is not a root (phrased to follow "is"), else None."""
    if isinstance(value, (Node, GradientEdge)):
        return None
    if not isinstance(value, Tensor):
        return (f"of type {type(value).__name__}, not a tensor (give a tensor, its grad_fn, "
                "or a list or dict of tensors)")
    if value.grad_fn is None and not value.requires_grad:
        return ("a tensor with no grad_fn that does not require grad, so it has no backward graph "
                "(was it computed under no_grad(), detached, or from tensors that do not require grad?)")
    return None
