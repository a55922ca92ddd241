"""Op interceptors: Python code that sees, and may replace, every operator call (cf. ``torch.utils._python_dispatch``).

An :class:`OpInterceptor` is a context manager. While it is entered, ``OpDef.__call__`` hands each operator call
to the most recently entered interceptor's :meth:`OpInterceptor.intercept` instead of running it (the interceptors
live on ``STATE.op_interceptors``, and being non-empty sets ``STATE.special``, so the fused fast paths step
aside and every operator call reaches ``OpDef.__call__``). As with a ``TorchDispatchMode``, the interceptor and
those entered after it are suspended while ``intercept`` runs: calling the operator there runs it (or hands it
to the interceptor entered before), and operators run by ``intercept`` itself are not intercepted again.

Unlike a ``TorchDispatchMode``, an interceptor sits *above* autograd: the calls it sees are the ones users make,
and running the operator records its autograd node as usual. :func:`run_with_result` records an operator's
node around a result computed elsewhere (what a dispatch mode returning a tensor without calling the kernel
amounts to). Transforms (``tracegrad.dispatch``) are a separate mechanism.
"""

from __future__ import annotations

from typing import Any

from .._state import STATE

__all__ = ["OpInterceptor", "run_with_result"]


class OpInterceptor:
    """Base class: override :meth:`intercept`; enter an instance to have it see every operator call."""

    def intercept(self, op, args: tuple, kwargs: dict) -> Any:
        """Handle ``op(*args, **kwargs)`` (``op`` a registered :class:`~tracegrad.ops.registry.OpDef`)."""
        return op(*args, **kwargs)

    def __call__(self, op, args: tuple, kwargs: dict) -> Any:
        stack = STATE.op_interceptors
        index = len(stack) - 1 - stack[::-1].index(self)
        suspended = stack[index:]
        del stack[index:]
        STATE.refresh()
        try:
            return self.intercept(op, args, kwargs)
        finally:
            stack.extend(suspended)
            STATE.refresh()

    def __enter__(self):
        STATE.op_interceptors.append(self)
        STATE.refresh()
        return self

    def __exit__(self, *exc: object) -> None:
        stack = STATE.op_interceptors
        del stack[len(stack) - 1 - stack[::-1].index(self)]
        STATE.refresh()


def restored_kernel(op, kernel: Any) -> Any:
    """An operator's kernel as it is put back: wrapped for the dtypes that came into being in the meantime
    (ops/barebones_unsigned.py, ops/bfloat16_in_float.py)."""
    from ..ops import barebones_unsigned, bfloat16_in_float

    return bfloat16_in_float.restored_kernel(op, barebones_unsigned.restored_kernel(op, kernel))


def run_with_result(op, args: tuple, kwargs: dict, result: Any) -> Any:
    """``op(*args, **kwargs)`` with ``result`` (what its kernel would return: an array, or a tuple/list of them)
    in place of running its kernel: the output tensors, views and autograd node are made as for a real call
    (an in-place operator records its write without writing)."""
    real = op.__dict__["kernel"]

    def kernel(*arrays: Any) -> Any:
        op.kernel = restored_kernel(op, real)  # at once: a saved-tensor hook running after this may call it again
        return result

    from ..ops._util import parsed_numbers

    # (NumPy numbers read as OpDef.__call__ reads them: the node saves what a real call would)
    bound = parsed_numbers(op.bind(args, kwargs) if kwargs or len(args) != op.n_params else args, op.number_idx,
                           op.float_idx)
    op.kernel = kernel
    try:
        return op._eager(bound)
    finally:
        op.kernel = restored_kernel(op, real)  # (wrapped if a barebones unsigned dtype came into being meanwhile)
