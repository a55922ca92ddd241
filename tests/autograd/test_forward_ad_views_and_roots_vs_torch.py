"""Forward-mode AD on views, forward roots and in-place changes, side by side with PyTorch: each program runs
with both libraries and prints what ``unpack_dual`` gives (tangent values, sizes, strides, storage offsets, graph
nodes) or the error raised.

* A view made before its base was reshaped in place (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
  ``as_strided_``) takes its tangent at its own storage place in the base's tangent, as PyTorch's ``fw_grad``
  (``as_strided`` of the base tangent), and a stored tangent has its primal's layout (``set_fw_grad``): tracegrad
  replayed the view's ops on the reshaped tangent (another element, or another shape) and kept a tangent's layout.
"""

from __future__ import annotations

import itertools

import pytest
from _lib import forward_ad_transcript, tg, torch

_SHOW = "t = fwAD.unpack_dual({0}).tangent\nprint('{0}', t, None if t is None else (t.shape, t.stride(), t.storage_offset()))\n"


def _printed(lib, program: str) -> str:
    return forward_ad_transcript(lib, program)


def _in_level(body: str) -> str:
    return "with fwAD.dual_level():\n" + "".join(f"    {line}\n" for line in body.splitlines())


# ---- views made before an in-place metadata change of their base -------------------------------------------------

_ROOTS = {
    "dual at an offset": "d = fwAD.make_dual(torch.arange(8.)[2:].reshape(2, 3), torch.arange(10., 16.).reshape(2, 3))",
    "primal": "d = fwAD.unpack_dual(fwAD.make_dual(torch.arange(6.).reshape(2, 3), torch.ones(2, 3))).primal",
    "primal at an offset": "d = fwAD.unpack_dual(torch.arange(9.)[3:].reshape(2, 3)).primal",
    "plain": "d = torch.arange(6.).reshape(2, 3).clone()",
}
_RESHAPES = [
    "d.t_()",
    "d.transpose_(0, 1)",
    "d.unsqueeze_(0)",
    "d.unsqueeze_(0).squeeze_()",
    "d.as_strided_((3, 2), (1, 3))",
    "d.as_strided_((2, 2), (3, 1), d.storage_offset() + 1)",
]
_VIEWS = ["d[0]", "d[:, 1]", "d.view(-1)", "d[1:, ::2]", "d.narrow(1, 1, 2)", "d.unbind(0)[1]"]
_WRITES = {
    "into the base": "d.mul_(fwAD.make_dual(torch.ones(d.shape), torch.arange(2., 2. + d.numel()).reshape(d.shape)))",
    "into the view": "v.mul_(fwAD.make_dual(torch.ones(v.shape), torch.arange(2., 2. + v.numel()).reshape(v.shape)))",
}


def _reshape_program(root: str, reshape: str, view: str, write: str) -> str:
    body = f"{_ROOTS[root]}\nv = {view}\n{reshape}\nw = {view}\n{_WRITES[write]}\n"
    return _in_level(body + _SHOW.format("v") + _SHOW.format("d") + _SHOW.format("w"))


@pytest.mark.parametrize("root", _ROOTS)
def test_view_made_before_its_base_was_reshaped_in_place(root):
    for reshape, view, write in itertools.product(_RESHAPES, _VIEWS, _WRITES):
        program = _reshape_program(root, reshape, view, write)
        assert _printed(tg, program) == _printed(torch, program), program


@pytest.mark.parametrize(
    "program",
    [
        # a dual's tangent takes the primal's layout (a transposed primal, one at a storage offset)
        _in_level("d = fwAD.make_dual(torch.arange(6.).reshape(3, 2).t(), torch.ones(2, 3))\n" + _SHOW.format("d")),
        _in_level(
            "d = fwAD.make_dual(torch.arange(8.)[2:], torch.arange(6.))\nd.as_strided_((2,), (1,), 0)\n"
            + _SHOW.format("d")
        ),
    ],
)
def test_stored_tangent_has_the_primal_layout(program):
    assert _printed(tg, program) == _printed(torch, program)


# ---- unpack_dual's primal: PyTorch's Identity node (the backward of _fw_primal) -----------------------------------

_NODE = (
    "g = {0}.grad_fn\n"
    "print(repr({0}), g.name(), type(g).__name__, repr(g).split(' object')[0], isinstance(g, torch.autograd.graph.Node))\n"
    "print([(f.name() if f is not None else None, n) for f, n in g.next_functions])\n"
)


@pytest.mark.parametrize(
    "program",
    [
        _in_level(
            "p = torch.arange(3.).requires_grad_()\nd = fwAD.make_dual(p * 1, torch.ones(3))\n"
            "q = fwAD.unpack_dual(d).primal\n"
            + _NODE.format("q")
            + _NODE.format("d")
            + "(q * torch.arange(1., 4.)).sum().backward()\nprint(p.grad)\n"
        ),
        _in_level("p = torch.arange(3.).requires_grad_()\nq = fwAD.unpack_dual(p).primal\n" + _NODE.format("q")),
        _in_level(
            "p = torch.arange(3.).requires_grad_()\nd = fwAD.make_dual(p.clone(), torch.ones(3))\n"
            "q = fwAD.unpack_dual(d[1:]).primal\n"
            + _NODE.format("q")
            + "r = fwAD.make_dual(q, torch.ones(2))\n"
            + _NODE.format("r")
        ),
    ],
)
def test_unpacked_primal_has_torchs_identity_node(program):
    assert _printed(tg, program) == _printed(torch, program)


# ---- argument checks of make_dual / unpack_dual / exit_dual_level -------------------------------------------------

_TRY = "try:\n    {0}\nexcept Exception as exc:\n    print(type(exc).__name__, exc)\n"


@pytest.mark.parametrize(
    "program",
    [
        # a tangent that is itself a dual tensor at the level
        _in_level(_TRY.format("fwAD.make_dual(torch.ones(3), fwAD.make_dual(torch.ones(3), torch.ones(3)))")),
        # a level other than PyTorch's only one
        _in_level(_TRY.format("print(fwAD.make_dual(torch.ones(3), torch.ones(3), level=1))")),
        _in_level(_TRY.format("print(fwAD.unpack_dual(fwAD.make_dual(torch.ones(3), torch.ones(3)), level=1))")),
        # unpack_dual of something else than a tensor (a return type, a list) in a level
        _in_level(_TRY.format("fwAD.unpack_dual(torch.ones(3).max(0))") + _TRY.format("fwAD.unpack_dual([1.])")),
        # leaving a level when there is none leaves the current level (-1) as it was: a level can be entered again
        _TRY.format("fwAD.exit_dual_level()")
        + "print(fwAD._current_level)\n"
        + _in_level("print(fwAD.unpack_dual(fwAD.make_dual(torch.ones(2), torch.ones(2))))"),
    ],
)
def test_level_and_tangent_checks_as_torch(program):
    assert _printed(tg, program) == _printed(torch, program)


# ---- the graph of a tangent: PyTorch's zero tensor for a missing tangent, _fw_primal, in-place copy_ --------------

_GRAPH_SETUPS = {
    "tangent requires grad": "p = torch.tensor([[1., -2., 3.], [0.5, 4., -1.]])\nt = torch.ones(2, 3).requires_grad_()\n"
    "c = torch.tensor([[2., 0.5, -3.], [1., 4., 2.]])",
    "primal requires grad": "p = torch.tensor([[1., -2., 3.], [0.5, 4., -1.]]).requires_grad_()\nt = torch.ones(2, 3)\n"
    "c = torch.tensor([[2., 0.5, -3.], [1., 4., 2.]])",
    "other requires grad": "p = torch.tensor([[1., -2., 3.], [0.5, 4., -1.]])\nt = torch.ones(2, 3)\n"
    "c = torch.tensor([[2., 0.5, -3.], [1., 4., 2.]]).requires_grad_()",
}
_GRAPH_OPS = [
    "d * 2",
    "2 * d",
    "d * c",
    "c * d",
    "d + 2",
    "d + c",
    "c + d",
    "d - 2",
    "d - c",
    "c - d",
    "d / 2",
    "d / c",
    "c / d",
    "2 / d",
    "d.add(c, alpha=2)",
    "d.sub(c, alpha=-2)",
    "d.mul(c)",
    "d.clone().mul_(c)",
    "c.clone().mul_(d)",
    "c.clone().add_(d)",
    "(d * 1).div_(c)",
    "d.pow(2)",
    "d.cumsum(1)",
    "d**c",
    "c**d",
    "d**3",
    "torch.addcmul(c, d, c)",
    "torch.addcmul(d, c, d, value=2)",
]
_GRAPH_SHOW = """def names(fn, depth):
    if fn is None or depth == 0:
        return None if fn is None else fn.name()
    return (fn.name(), [names(f, depth - 1) for f, _ in fn.next_functions])
tangent = fwAD.unpack_dual(out).tangent
print(tangent, tangent.requires_grad, names(tangent.grad_fn, 3))
if tangent.requires_grad:
    grads = torch.autograd.grad((tangent * torch.arange(6.).reshape(2, 3)).sum(), [x for x in (p, t, c) if x.requires_grad])
    print([(g + 0).tolist() for g in grads])  # (+ 0: a gradient of PyTorch's zero tensor has no storage to list)
"""


@pytest.mark.parametrize("setup", _GRAPH_SETUPS)
def test_tangent_graph_of_binary_ops_as_torch(setup):
    for op in _GRAPH_OPS:
        program = _in_level(f"{_GRAPH_SETUPS[setup]}\nd = fwAD.make_dual(p, t)\nout = {op}\n{_GRAPH_SHOW}")
        assert _printed(tg, program) == _printed(torch, program), program


@pytest.mark.parametrize(
    "program",
    [
        # an in-place op writes its new tangent into the old one with copy_, recorded (CopyBackwards) ...
        _in_level(
            "t = torch.ones(3).requires_grad_()\nd = fwAD.make_dual(torch.arange(3.), t * 1)\nd.mul_(2)\n"
            "tangent = fwAD.unpack_dual(d).tangent\nprint(tangent, tangent.grad_fn.name())\n"
            "print(torch.autograd.grad(tangent.sum(), t)[0].tolist())"
        ),
        # ... so a tangent that is a leaf requiring grad is refused, as torch's
        _in_level(
            "t = torch.ones(3).requires_grad_()\nd = fwAD.make_dual(torch.arange(3.), t)\n" + _TRY.format("d.mul_(2)")
        ),
        # a formula reads its inputs' _fw_primal (no tangent): the gradient of a tangent, taken in the level, has a
        # tangent only through what the formula saved with one (the output, for div)
        _in_level(
            "t = torch.ones(3).requires_grad_()\nd = fwAD.make_dual(torch.tensor([1., -2., 4.]), t)\n"
            "c = torch.tensor([2., 0.5, 3.])\n"
            "for out in (c / d, d / c, d * c, d * d, c - d, d * c * d):\n"
            "    g, = torch.autograd.grad(fwAD.unpack_dual(out).tangent.sum(), t)\n"
            "    tangent = fwAD.unpack_dual(g).tangent\n"
            "    print(g.tolist(), None if tangent is None else tangent.tolist())\n"
        ),
        # pow's base term of a missing tangent is a where() over the zero tensor: +0. zeros, which a -0. term added
        # to them does not keep
        _in_level(
            "d = fwAD.make_dual(torch.tensor([1., 2., 0.]), torch.tensor([-0., -0., 1.]))\n"
            "c = torch.tensor([2., 3., 0.])\n"
            "for out in (c ** d, d ** c, d ** torch.tensor([0., 1., 2.])):\n"
            "    tangent = fwAD.unpack_dual(out).tangent\n"
            "    print(tangent.tolist(), torch.signbit(tangent).tolist())\n"
        ),
        # the zero tensor's terms leave every value as it is: signed zeros, a product with inf
        _in_level(
            "t = torch.tensor([-0., 0., 1., -0.]).requires_grad_()\n"
            "d = fwAD.make_dual(torch.tensor([float('inf'), 1., -2., 0.]), t)\n"
            "c = torch.tensor([1., -1., 0., float('nan')])\n"
            "for out in (d + c, c + d, d - c, c - d, d * c, c * d, d / c, c / d, d.sub(c, alpha=-1), d * 2):\n"
            "    tangent = fwAD.unpack_dual(out).tangent\n"
            "    print(tangent.tolist(), torch.signbit(tangent).tolist())\n"
        ),
    ],
)
def test_tangent_graph_details_as_torch(program):
    assert _printed(tg, program) == _printed(torch, program)


@pytest.mark.parametrize(
    ("root", "reshape", "view", "write"),
    [
        ("dual at an offset", "d.unsqueeze_(0).squeeze_()", "d.view(-1)", "into the base"),
        ("primal", "d.t_()", "d[:, 1]", "into the view"),
        ("primal at an offset", "d.unsqueeze_(0)", "d.diagonal()", "into the base"),
    ],
)
def test_view_replay_made_before_its_forward_root_was_reshaped(root, reshape, view, write):
    # Under view replay a view's tangent replays its ops after its forward root's on the root's tangent, the ops
    # counted when the view was made (the root's own chain grows when it is reshaped in place): torch's replay on
    # the reshaped root may fail, and a first tangent written into the view is copied into it as torch's copy_.
    program = "with torch.autograd._force_original_view_tracking(True):\n" + "".join(
        f"    {line}\n" for line in _reshape_program(root, reshape, view, write).splitlines()
    )
    assert _printed(tg, program) == _printed(torch, program)
