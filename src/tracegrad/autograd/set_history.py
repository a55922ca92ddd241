"""What autograd records for ``Tensor.set_``: torch declares it without a derivative, so a write that autograd
would record (self or a tensor source requiring grad, or a view of a base that does) gives self a
``torch::autograd::NotImplemented`` node, with edges to self's history and to the source's (none for a storage),
the autograd fallback's sequence number, and a backward that refuses. It is checked and rebased as any in-place
op is: a leaf requiring grad, a view of one, or a view made in no_grad mode is refused; a view's base takes a
CopySlices."""

from __future__ import annotations

from .._state import STATE
from .edges import NO_EDGE, gradient_edge
from .node import UINT64_MAX, Node
from .node_meta import meta_record
from .views import check_inplace, rebase_history, record_inplace_on_view


class SetNotImplemented(Node):
    """The node of a recorded ``set_``."""

    __slots__ = ()
    _name = "torch::autograd::NotImplemented"

    def apply(self, grads):
        raise RuntimeError("derivative for set_ is not implemented")


def node_before_set(target, source_tensor) -> SetNotImplemented | None:
    """The node for ``target.set_(...)`` (``source_tensor``: the source where it is a tensor, else None), made
    before the write with the inputs' histories as they were, or None where nothing is recorded; torch's
    in-place checks first."""
    if not STATE.grad_enabled:
        return None
    inputs = (target,) if source_tensor is None else (target, source_tensor)
    if not check_inplace(target, any(t.requires_grad for t in inputs)):
        return None
    node = SetNotImplemented()
    node._seq = UINT64_MAX
    node._edges = tuple(gradient_edge(t) if t.requires_grad else NO_EDGE for t in inputs)
    node._in_meta = tuple(meta_record(t._data.shape, t._data.dtype) if t.requires_grad else None for t in inputs)
    return node


def record_set(target, node: SetNotImplemented) -> None:
    """``target``'s history after the write: the node, or for a view, its base's CopySlices around it."""
    if target._base is not None:
        record_inplace_on_view(None, (), target, node)
    else:
        rebase_history(target, node)
