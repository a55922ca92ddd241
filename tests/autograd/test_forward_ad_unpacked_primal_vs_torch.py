"""The primal that ``forward_ad.unpack_dual`` returns carries no tangent, and neither does anything computed from
it alone, as in PyTorch (its ``_fw_primal`` is a view for backward only). tracegrad's primal was a view that took
its tangent from the dual tensor it came from, so ``unpack_dual(primal * 2).tangent`` was not None, a JVP
computed partly from the primal counted the tangent twice, and the primal's repr showed a ``tangent=`` suffix.
"""

from __future__ import annotations

import contextlib
import io

import pytest
from _lib import tg, torch


def _summary(lib, t):
    """(values, tangent values or None) of ``t`` at the current level."""
    tangent = lib.autograd.forward_ad.unpack_dual(t).tangent
    return t.detach().reshape(-1).tolist(), None if tangent is None else tangent.reshape(-1).tolist()


def _programs(lib):
    fw = lib.autograd.forward_ad
    made = {}
    x = lib.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]])
    v = lib.tensor([[1.0, -1.0, 0.5], [0.25, 2.0, -0.5]])

    def output_primal():
        y = fw.make_dual(x, v).sin()
        p = fw.unpack_dual(y).primal
        return [p, p * 3, p[:1], p.t(), p.view(-1), p[0, 1:], p + y, y * p, y]

    def view_primal():
        d = fw.make_dual(x.clone(), v)
        row = d[1]
        p = fw.unpack_dual(row).primal
        return [p, p.exp(), p[1:], row, d]

    def redualled_primal():
        y = fw.make_dual(x, v).cos()
        p = fw.unpack_dual(y).primal
        again = fw.make_dual(p, lib.ones(2, 3))
        return [again, again * y, p, y]

    def primal_written_in_place():
        y = fw.make_dual(x, v) * 2
        p = fw.unpack_dual(y).primal
        p.mul_(3)
        return [p, y]

    def primal_added_a_dual_in_place():
        d = fw.make_dual(x, v)
        y = d * 2
        p = fw.unpack_dual(y).primal
        p.add_(d)
        return [p, y, p[0]]

    def jvp_mixing_primal_and_dual():
        d = fw.make_dual(x, v)
        y = d.tanh()
        p = fw.unpack_dual(y).primal
        return [(y * p).sum(), (p * p + y).sum()]

    for name, program in (("output primal", output_primal), ("view primal", view_primal),
                          ("re-dualled primal", redualled_primal), ("primal written in place", primal_written_in_place),
                          ("primal added a dual in place", primal_added_a_dual_in_place),
                          ("jvp mixing primal and dual", jvp_mixing_primal_and_dual)):
        with fw.dual_level():
            try:
                made[name] = [_summary(lib, t) for t in program()]
            except RuntimeError as exc:
                made[name] = f"RuntimeError: {exc}"
    return made


_TORCH, _TG = {}, {}


@pytest.mark.parametrize("name", ["output primal", "view primal", "re-dualled primal", "primal written in place",
                                  "primal added a dual in place", "jvp mixing primal and dual"])
def test_unpacked_primal_as_in_torch(name):
    if not _TORCH:
        _TORCH.update(_programs(torch))
        _TG.update(_programs(tg))
    expected, got = _TORCH[name], _TG[name]
    if isinstance(expected, str):
        assert got == expected
        return
    assert len(got) == len(expected)
    for (values, tangent), (want_values, want_tangent) in zip(got, expected, strict=True):
        assert values == pytest.approx(want_values, rel=1e-6)
        assert (tangent is None) == (want_tangent is None)
        if tangent is not None:
            assert tangent == pytest.approx(want_tangent, rel=1e-6)


def test_primal_repr_has_no_tangent():
    texts = []
    for lib in (torch, tg):
        fw = lib.autograd.forward_ad
        with fw.dual_level():
            y = fw.make_dual(lib.ones(3), lib.full((3,), 2.0)).sin()
            texts.append(repr(fw.unpack_dual(y)))
    assert texts[1] == texts[0]
    assert texts[1].count("tangent=") == 1


# A forward root's views share its tangent: the primal and make_dual's result are views of their input for backward
# only, and a view of one takes its tangent from it (written in place through the view or through the root, in
# this level or a later one), never from the tensor they alias.
_VIEW_PROGRAMS = [
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.,2.,3.]), torch.tensor([10.,20.,30.]))
    p, _ = fwAD.unpack_dual(d)
    p[1:].add_(fwAD.make_dual(torch.ones(2), torch.tensor([1.,2.])))
    print(fwAD.unpack_dual(p).tangent, fwAD.unpack_dual(p*2).tangent, fwAD.unpack_dual(d).tangent)
""",
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.,2.,3.]), torch.tensor([10.,20.,30.]))
    p, _ = fwAD.unpack_dual(d)
    p[0] = d[1]
    print(fwAD.unpack_dual(p).tangent, repr(p))
""",
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.,2.,3.]), torch.tensor([10.,20.,30.]))
    p, _ = fwAD.unpack_dual(d)
    q = p[1:]; q[0] = d[1]
    print(fwAD.unpack_dual(q).tangent, fwAD.unpack_dual(p).tangent)
""",
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([[1.,2.],[3.,4.]]), torch.ones(2, 2))
    p, _ = fwAD.unpack_dual(d)
    r = p[0]; r.copy_(d[1])
    print(fwAD.unpack_dual(p).tangent)
""",
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.,2.,3.]), torch.tensor([10.,20.,30.]))
    p, _ = fwAD.unpack_dual(d)
    w = p[:2]
    p.add_(fwAD.make_dual(torch.ones(3), torch.tensor([1.,2.,3.])))
    print(fwAD.unpack_dual(w).tangent, fwAD.unpack_dual(p).tangent)
""",
    """x = torch.tensor([1.,2.,3.])
with fwAD.dual_level():
    p = fwAD.unpack_dual(x).primal
    p[:2].mul_(fwAD.make_dual(torch.ones(2), torch.tensor([2.,3.])))
    print(fwAD.unpack_dual(p).tangent, fwAD.unpack_dual(x).tangent)
""",
    """x = torch.tensor([1.,2.,3.])
with fwAD.dual_level():
    p = fwAD.unpack_dual(x).primal
    w = p[:2]
    p.mul_(fwAD.make_dual(torch.ones(3), torch.tensor([2.,3.,4.])))
    print(fwAD.unpack_dual(w).tangent, fwAD.unpack_dual(p).tangent, fwAD.unpack_dual(x).tangent)
""",
    """x = torch.tensor([1.,2.,3.])
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.tensor([1.,2.,3.]))
with fwAD.dual_level():
    v = d[:2]
    d.mul_(fwAD.make_dual(torch.ones(3), torch.tensor([4.,5.,6.])))
    print(fwAD.unpack_dual(v).tangent, fwAD.unpack_dual(d).tangent, fwAD.unpack_dual(x).tangent)
""",
    """x = torch.tensor([1.,2.,3.])
with fwAD.dual_level():
    d = fwAD.make_dual(x, torch.tensor([1.,2.,3.]))
    v = d[:2]
with fwAD.dual_level():
    v.mul_(fwAD.make_dual(torch.ones(2), torch.tensor([4.,5.])))
    print(fwAD.unpack_dual(v).tangent, fwAD.unpack_dual(d).tangent, fwAD.unpack_dual(x).tangent)
""",
    """with fwAD.dual_level():
    d = fwAD.make_dual(torch.tensor([1.,2.,3.]), torch.tensor([10.,20.,30.]))
    v = d[1:]
    y = d.sin()
    p = fwAD.unpack_dual(y).primal
    print(fwAD.unpack_dual(v).tangent, fwAD.unpack_dual(p).tangent, fwAD.unpack_dual(p[1:]).tangent, fwAD.unpack_dual(p * d).tangent)
"""
]


def _printed(lib, program: str) -> str:
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(program, {"torch": lib, "fwAD": lib.autograd.forward_ad})  # noqa: S102 - the programs above
    return buffer.getvalue().replace("tracegrad", "torch")


@pytest.mark.parametrize("k", range(len(_VIEW_PROGRAMS)))
def test_views_of_a_forward_root_as_in_torch(k):
    assert _printed(tg, _VIEW_PROGRAMS[k]) == _printed(torch, _VIEW_PROGRAMS[k])
