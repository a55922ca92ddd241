"""Recorded graphs of overloads and composites the OpInfo samples do not reach: the node classes and
``next_functions`` must be PyTorch's (see ``test_graph_matches_torch`` for the database-wide check)."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, recorded_graph, run_both, tg, torch


def _clone_set(key, value):
    def run(lib, a):
        c = a.clone()
        c[key] = value
        return c

    return run


CASES = {
    "squeeze_dim": lambda lib, a: a[None].squeeze(0),
    "squeeze_dims": lambda lib, a: lib.squeeze(a[None], (0,)),
    "squeeze_all": lambda lib, a: a[None].squeeze(),
    "sort_plain": lambda lib, a: lib.sort(a, 1)[0],
    "sort_stable": lambda lib, a: a.sort(stable=False)[0],
    "movedim": lambda lib, a: lib.movedim(a, 0, 1),
    "movedim_0d": lambda lib, a: lib.movedim(a.sum(), (), ()),
    "reshape_contiguous": lambda lib, a: a.reshape(-1),
    "reshape_alias": lambda lib, a: a.t().reshape(4, 1, 3),
    "reshape_copy": lambda lib, a: a.t().reshape(-1),
    "setitem_scalar_view": _clone_set((slice(None), 1), 2.0),
    "setitem_scalar_whole": _clone_set(Ellipsis, 2.0),
    "setitem_full_slices": _clone_set((slice(0, 3), slice(None, 10)), 2.0),
    "getitem_bare_full_slice": lambda lib, a: a[:] * 1,
    "getitem_full_slice_in_tuple": lambda lib, a: a[:3, :2] * 1,
    "eq_scalar_inplace": lambda lib, a: a.clone().eq_(0.5),
    "rsub_scalar": lambda lib, a: lib.rsub(a, 2),
    "floor_divide": lambda lib, a: lib.floor_divide(a, a),
    "broadcast_tensors": lambda lib, a: lib.broadcast_tensors(a, a[:1]),
    "where_scalar": lambda lib, a: lib.where(a > 0.5, a, 0.0),
    "take": lambda lib, a: lib.take(a, lib.tensor([0, 5])),
    "fill_number": lambda lib, a: a.clone().fill_(0.5),
    "fill_constant_tensor": lambda lib, a: a.clone().fill_(lib.tensor(0.5)),
    "fill_tensor_requiring_grad": lambda lib, a: a.clone().fill_(a.sum()),
    "zero_": lambda lib, a: a.clone().zero_(),
    "matmul_vec_mat": lambda lib, a: lib.matmul(a[:, 0], a),
    "multi_dot_two": lambda lib, a: lib.linalg.multi_dot([a, a[0]]),
    "multi_dot_vec_vec": lambda lib, a: lib.linalg.multi_dot([a[:, 0], a, a[0]]),
    "multi_dot_left_first": lambda lib, a: lib.linalg.multi_dot([a[:1], a.t(), a]),
    "multi_dot_right_first": lambda lib, a: lib.linalg.multi_dot([a.t(), a[:, :2], a[:2, :1]]),
    "multi_dot_chain": lambda lib, a: lib.linalg.multi_dot([a[:, 0], a, a.t(), a[:2, :3].t(), a[:2]]),
    "chain_matmul_one": lambda lib, a: lib.chain_matmul(a),
}


@pytest.mark.parametrize("name", CASES)
def test_graph_is_torchs(name: str):
    values = np.random.default_rng(0).random((3, 4))
    graphs = []
    for lib in (tg, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # chain_matmul's deprecation
            out = CASES[name](lib, lib.tensor(values, requires_grad=True))
        outs = out if isinstance(out, (tuple, list)) else (out,)
        graphs.append(recorded_graph([o for o in outs if o.requires_grad]))
    assert graphs[0] == graphs[1]


def test_movedim_errors_are_torchs():
    for src, dst in (((0, 1), (0,)), ((0, 0), (0, 1)), ((0, 1), (1, 1))):
        with pytest.raises(RuntimeError) as theirs:
            torch.movedim(torch.zeros(2, 3), src, dst)
        with pytest.raises(RuntimeError) as ours:
            tg.movedim(tg.zeros(2, 3), src, dst)
        assert str(ours.value) == str(theirs.value)


def test_transposes_and_fill_record_torch_nodes():
    """``.H``, ``.mH``, ``.mT``, ``adjoint()`` are ``transpose(-2, -1)`` (conjugated for the adjoints); ``fill_``
    with a number is ``fill_.Scalar`` (FillBackward2); their errors are torch's."""

    def program(lib):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        z = lib.tensor(np.arange(4.0).reshape(2, 2) + 1j * np.arange(4.0).reshape(2, 2))
        filled = x.clone()
        filled.fill_(0.5)
        errors = []
        for make in (lambda: lib.ones(3).H, lambda: lib.ones(3).mH, lambda: lib.ones(3).adjoint(),
                     lambda: lib.ones(2, 3, 3).H, lambda: lib.ones(3).mT):
            try:
                make()
            except RuntimeError as e:
                errors.append(str(e))
        return ([t.grad_fn.name() for t in (x.H, x.mH, x.mT, x.adjoint(), filled)], errors,
                z.mH.resolve_conj().numpy().tolist() if lib is torch else z.mH.numpy().tolist())

    ours, theirs = run_both(program)
    assert ours == theirs


def test_multi_dot_order_and_errors_are_torchs():
    """``multi_dot`` multiplies in PyTorch's order (the right operand of each ``mm`` first, so the sequence
    numbers, hence the backward order, are torch's) and raises torch's errors."""

    def program(lib):
        shapes = [(2, 30), (30, 3), (3, 40), (40, 5), (5, 6)]
        ms = [lib.tensor(np.ones(s), requires_grad=True) for s in shapes]
        nodes, fn = [], lib.linalg.multi_dot(ms).grad_fn
        stack = [fn]
        while stack:
            fn = stack.pop()
            if fn is not None and fn.name() == "MmBackward0":
                nodes.append(fn._sequence_nr())
                stack.extend(n for n, _ in fn.next_functions)
        errors = []
        for ts in ([lib.ones(2, 3, 4), lib.ones(4)], [lib.ones(3), lib.ones(2, 3, 4)], [lib.ones(3)],
                   [lib.ones(3), lib.ones(3, 3, 3), lib.ones(3)], [lib.ones(2, 3), lib.ones(2, 3)],
                   [lib.ones(3, dtype=lib.float64), lib.ones(3, 2, dtype=lib.float32)]):
            with pytest.raises(RuntimeError) as e:
                lib.linalg.multi_dot(ts)
            errors.append(str(e.value))
        return [n - min(nodes) for n in nodes], errors

    ours, theirs = run_both(program)
    assert ours == theirs


def test_fill_errors_are_torchs():
    for lib in (tg, torch):
        with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor but got tensor with 1 "
                                               "dimensions."):
            lib.ones(2).fill_(lib.ones(2))
