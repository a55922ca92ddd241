"""Complex-input behaviour where tracegrad knowingly differs from torch 2.13 because torch is wrong.

The OpInfo database (tests/opinfo) compares complex gradients with torch's; the cases below are kept out of it
(their samples use real scalars) and checked here instead: tracegrad against finite differences (Wirtinger
gradcheck) and against torch where torch is right, plus the torch defect itself, so a torch release that fixes
it shows up as a failure here.
"""

from __future__ import annotations

import pytest
from _lib import assert_close, np, tg, torch

ALPHA = 1.5 - 0.5j


def _index_add_inputs(lib):
    rng = np.random.default_rng(3)
    self_ = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    source = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    return (lib.tensor(self_, requires_grad=True), lib.tensor(np.array([2, 0])),
            lib.tensor(source, requires_grad=True))


def _index_add(x, index, source):
    return x.index_add(0, index, source, alpha=ALPHA)


def test_index_add_complex_alpha_gradient_is_conjugated():
    """d(source * alpha) needs grad * conj(alpha); torch 2.13's index_add backward multiplies by alpha itself."""
    x, index, source = _index_add_inputs(tg)
    assert tg.autograd.gradcheck(_index_add, (x, index, source), fast_mode=False)
    assert tg.autograd.gradgradcheck(_index_add, (x, index, source), fast_mode=True)
    tx, tindex, tsource = _index_add_inputs(torch)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):  # the torch defect (remove once fixed)
        torch.autograd.gradcheck(_index_add, (tx, tindex, tsource), fast_mode=False)

    rng = np.random.default_rng(4)
    cot = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    ours = tg.autograd.grad(_index_add(x, index, source), (x, source), tg.tensor(cot))
    theirs = torch.autograd.grad(_index_add(tx, tindex, tsource), (tx, tsource), torch.tensor(cot))
    assert_close(ours[0], theirs[0], rtol=1e-12, atol=1e-12)  # self's gradient: grad itself, as torch
    assert_close(ours[1], theirs[1] * (ALPHA.conjugate() / ALPHA), rtol=1e-12, atol=1e-12)


def test_index_add_complex_alpha_forward_ad_matches_torch():
    """torch's forward-mode formula (self_t.index_add(dim, index, source_t * alpha)) is right: tangents agree."""
    rng = np.random.default_rng(5)
    tangents = [rng.standard_normal(s) + 1j * rng.standard_normal(s) for s in ((3, 4), (2, 4))]
    results = []
    for lib in (tg, torch):
        x, index, source = _index_add_inputs(lib)
        fwad = lib.autograd.forward_ad
        with fwad.dual_level():
            dx = fwad.make_dual(x.detach(), lib.tensor(tangents[0]))
            ds = fwad.make_dual(source.detach(), lib.tensor(tangents[1]))
            results.append(fwad.unpack_dual(_index_add(dx, index, ds)).tangent.clone())
    assert_close(results[0], results[1], rtol=1e-12, atol=1e-12)
