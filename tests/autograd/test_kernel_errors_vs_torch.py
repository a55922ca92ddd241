"""What autograd has done when an operator's kernel fails, and the nodes of operators without a derivative.

PyTorch's generated code makes an operator's node (taking a sequence number) and packs its saved inputs
before the kernel runs. So a call that raises (a shape mismatch in a notebook cell) still moves the sequence
numbers every later node shows, and pack hooks have seen its inputs; an in-place operator whose other
operand is its own target saved that operand before the write and refuses to backward. Operators PyTorch
has no derivative for get a ``NotImplemented`` node with no sequence number and edges only to inputs that
require grad.
"""

from __future__ import annotations

import pytest

from tests._lib import raised, tg, torch

UINT64_MAX = (1 << 64) - 1


def _failing_calls(lib, a):
    return {
        "broadcast": lambda: a.view(3, 1) + lib.ones(2, 2, requires_grad=True),
        "cat": lambda: lib.cat([a, lib.ones(2, 2)]),
        "mv": lambda: lib.mv(lib.ones(2, 2), a),
        "sum dim": lambda: a.sum(5),
        "softmax dim": lambda: a.softmax(3),
        "index": lambda: a[lib.tensor([5])],
        "gather": lambda: a.gather(0, lib.tensor([7])),
        "reshape": lambda: a.reshape(2, 2),
        "view": lambda: a.view(4),
        "linear": lambda: lib.nn.functional.linear(lib.ones(2, 4), lib.ones(3, 3, requires_grad=True)),
        "linear 3-d": lambda: lib.nn.functional.linear(lib.ones(2, 2, 4), lib.ones(3, 3, requires_grad=True),
                                                       lib.ones(3)),
        "linear bias": lambda: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(3, 3, requires_grad=True),
                                                        lib.ones(5)),
        "matmul": lambda: a @ lib.ones(4, 2),
        "pow": lambda: a.pow(lib.tensor([1, 2])),
        "where": lambda: lib.where(a > 0, a, lib.zeros(2, 2)),
        "clamp": lambda: a.clamp(min=lib.ones(2, 2)),
        "comparison": lambda: a > lib.ones(2),
        "out=": lambda: lib.exp(a, out=lib.empty(3)),
    }


def _failing_nn_calls(lib, a):
    F = lib.nn.functional
    x = a.view(1, 1, 2, 3) if a is not None else None
    return {
        "cross_entropy target out of range": lambda: F.cross_entropy(a.view(1, 3), lib.tensor([9])),
        "cross_entropy batch sizes": lambda: F.cross_entropy(a.view(1, 3), lib.tensor([0, 1])),
        "cross_entropy float target shape": lambda: F.cross_entropy(a.view(1, 3), lib.ones(2, 3)),
        "nll_loss target out of range": lambda: F.nll_loss(a.view(1, 3), lib.tensor([9])),
        "nll_loss 3-d batch sizes": lambda: F.nll_loss(a.view(1, 3, 1), lib.zeros(2, 1, dtype=lib.long)),
        "mse_loss shapes": lambda: F.mse_loss(a, lib.ones(2, 3)),
        "conv2d channels": lambda: F.conv2d(x, lib.ones(2, 3, 2, 2, requires_grad=True)),
        "conv2d kernel": lambda: F.conv2d(x, lib.ones(2, 1, 6, 6, requires_grad=True)),
        "max_pool2d": lambda: F.max_pool2d(x, 6),
        "layer_norm": lambda: F.layer_norm(a, (4,)),
        "batch_norm running_mean": lambda: F.batch_norm(a.view(1, 3), lib.zeros(2), lib.ones(3), training=True),
        "batch_norm bias": lambda: F.batch_norm(a.view(1, 3), lib.zeros(3), lib.ones(3), bias=lib.ones(2)),
        "embedding": lambda: F.embedding(lib.tensor([7]), a.view(3, 1)),
        "reflect pad": lambda: F.pad(a.view(1, 1, 3), (10, 1), mode="reflect"),
        "circular pad": lambda: F.pad(a.view(1, 1, 3), (9, 0), mode="circular"),
        "diagonal dims": lambda: lib.diagonal(a.view(1, 3), dim1=0, dim2=0),
        "cholesky": lambda: lib.linalg.cholesky(-lib.eye(3, requires_grad=True)),
        "inverse of non-square": lambda: lib.linalg.inv(a.view(1, 3)),
        "topk": lambda: a.topk(9),
        "index_select": lambda: a.index_select(0, lib.tensor([9])),
        "scatter": lambda: a.scatter(0, lib.tensor([9]), 1.0),
        "masked_fill": lambda: a.masked_fill(lib.ones(2, dtype=lib.bool), 0.),
        "permute": lambda: a.view(1, 3).permute(0, 0),
        "squeeze": lambda: a.squeeze(4),
        "kthvalue": lambda: a.kthvalue(9),
        "lerp": lambda: lib.lerp(a, lib.ones(2), 0.5),
        "addcmul": lambda: lib.addcmul(a, lib.ones(2), lib.ones(2)),
        "einsum sizes": lambda: lib.einsum("ij,jk->ik", a.view(1, 3), lib.ones(4, 2)),
        "einsum three operands": lambda: lib.einsum("ij,jk,kl->il", a.view(1, 3), lib.ones(3, 4), lib.ones(5, 2)),
        "einsum repeated label": lambda: lib.einsum("ii->i", a.view(1, 3)),
    }


def _numbers_taken(lib, calls, name):
    a = lib.randn(3, requires_grad=True)
    first = (a * 1).grad_fn._sequence_nr()
    error = raised(lib, lambda _: calls(lib, a)[name]())
    if error is not None and error[0] == "_LinAlgError":  # (torch.linalg.LinAlgError's class name)
        error = ("LinAlgError", error[1])
    return (a * 1).grad_fn._sequence_nr() - first - 1, error


@pytest.mark.parametrize("calls,name", [(calls, name) for calls in (_failing_calls, _failing_nn_calls)
                                        for name in calls(torch, None)])
def test_a_failing_call_takes_the_sequence_numbers_torch_takes(calls, name):
    """The error (type and message) and the sequence numbers it has used up, as in torch."""
    ours, theirs = _numbers_taken(tg, calls, name), _numbers_taken(torch, calls, name)
    assert theirs[1] is not None
    assert ours == theirs


def test_linalg_errors_are_named_as_torchs_class():
    for lib in (tg, torch):
        assert lib.linalg.LinAlgError.__name__ == "_LinAlgError"
        assert issubclass(lib.linalg.LinAlgError, RuntimeError)


def _pack_events(lib):
    a, b = lib.randn(3, requires_grad=True), lib.randn(4, requires_grad=True)
    events = []

    def pack(t):
        events.append(("pack", tuple(t.shape)))
        return t

    with lib.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        for call in (lambda: a * b, lambda: lib.mm(a.view(3, 1), b.view(2, 2)), lambda: a.exp(),
                     lambda: lib.nn.functional.linear(a.view(1, 3), b.view(2, 2))):
            try:
                call()
            except RuntimeError:
                events.append("error")
    return events


def test_pack_hooks_see_the_inputs_before_the_kernel_raises():
    assert _pack_events(tg) == _pack_events(torch)


def _without_derivative(lib):
    a = lib.randn(3, requires_grad=True)
    calls = {
        "floor_divide number": lambda: lib.floor_divide(a, 2), "floor_divide tensor": lambda: a // lib.tensor(2.),
        "reflected": lambda: 2 // a, "heaviside": lambda: lib.heaviside(a, lib.tensor(0.5)),
        "in-place": lambda: a.clone().floor_divide_(2), "remainder number first": lambda: lib.remainder(2, a),
        "two inputs": lambda: lib.binomial(a.detach().abs().requires_grad_(), a.sigmoid()),
    }
    rows = []
    for name, call in calls.items():
        first = (a * 1).grad_fn._sequence_nr()
        node = call().grad_fn
        taken = (a * 1).grad_fn._sequence_nr() - first - 1
        rows.append((name, node.name(), node._sequence_nr() == UINT64_MAX, taken,
                     [None if fn is None else fn.name() for fn, _ in node.next_functions]))
    return rows


def test_operators_without_derivative_get_torchs_not_implemented_node():
    assert _without_derivative(tg) == _without_derivative(torch)


def _integer_results(lib):
    a = lib.randn(3, requires_grad=True)
    rows = []
    for call in (lambda: a.sum(dtype=lib.int64), lambda: a.cumsum(0, dtype=lib.int64), lambda: a.prod(dtype=lib.int32),
                 lambda: a.long(), lambda: a.to(lib.int32), lambda: a.bool(), lambda: a.argmax(), lambda: a > 0):
        first = (a * 1).grad_fn._sequence_nr()
        try:
            out = call()
            result = (str(out.dtype).split(".")[-1], out.requires_grad, out.grad_fn)
        except RuntimeError as exc:
            result = str(exc)
        rows.append((result, (a * 1).grad_fn._sequence_nr() - first - 1))
    return rows


def test_integer_results_of_differentiable_operators_are_refused_as_in_torch():
    ours, theirs = _integer_results(tg), _integer_results(torch)
    assert ours == theirs
    assert theirs[0][0] == "Autograd not support dtype: Long"


@pytest.mark.parametrize("op", ["mul_", "div_", "atan2_", "add_"])
def test_an_in_place_operand_aliasing_its_target_was_saved_before_the_write(op):
    def program(lib):
        x = lib.tensor([1., 2., 3.], requires_grad=True)
        a = x.clone()
        getattr(a, op)(a)
        a.sum().backward()
        return x.grad.tolist()

    ours, theirs = raised(tg, program), raised(torch, program)
    assert ours == theirs
    if op == "add_":  # add saves nothing: both compute the gradient
        assert program(tg) == program(torch) == [2., 2., 2.]


def _in_place_numbers(lib):
    """Sequence numbers used by in-place calls: the node, plus ``self.clone()`` only when a saved copy of self
    can be read (``x.mul_(2)`` makes none, ``x.mul_(w)`` with ``w`` requiring grad makes one)."""
    x = lib.rand(3, requires_grad=True)

    def y(requires_grad=False):
        return (lib.rand(3) + 0.5).requires_grad_(requires_grad)

    calls = [lambda c: c.mul_(y()), lambda c: c.mul_(y(True)), lambda c: c.mul_(2.), lambda c: c.div_(y()),
             lambda c: c.div_(y(True)), lambda c: c.pow_(2.), lambda c: c.pow_(y(True)), lambda c: c.atan2_(y()),
             lambda c: c.addcmul_(y(True), y()), lambda c: c.lerp_(y(True), y(True)), lambda c: c.fmod_(y()),
             lambda c: c.remainder_(y(True)), lambda c: c.hypot_(y()), lambda c: c.clamp_(y(), None),
             lambda c: c.view(1, 3).addmm_(y().view(1, 3)[:, :1], y(True).view(1, 3)), lambda c: c.mul_(lib.ones(2, 3))]
    rows = []
    for call in calls:
        c = x.clone()
        first = (x * 1).grad_fn._sequence_nr()
        error = raised(lib, lambda _, call=call, c=c: call(c))
        rows.append(((x * 1).grad_fn._sequence_nr() - first - 1, error))
    return rows


def test_in_place_operators_take_torchs_sequence_numbers():
    assert _in_place_numbers(tg) == _in_place_numbers(torch)
