"""A thirtieth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and
compared.

These add what the other program files do not run: teaching notebooks that probe the gradient conventions at
awkward points. Subgradients at kinks (abs, relu, relu6, hardtanh, leaky_relu, clamp/clip at and beyond scalar
and tensor bounds, a crossed clamp); ties in max/min/amax/amin/maximum/minimum/median/kthvalue/sort/topk/
cummax/cummin; norms at zero (vector_norm for p in 0, 0.5, 1, 2, 3, inf, norm, dist, cdist, pdist, matrix norms);
roots and powers at zero (sqrt, rsqrt, pow with exponents 0, 0.5, 1, 2, -1 and tensor exponents, negative bases,
``x ** 0``); logarithms and special points (atan2(0, 0), log(0), xlogy(0, 0), xlog1py, sinc(0), logsumexp of all
-inf, softmax of -inf rows, log_softmax saturation); zero gradients of sign/round/floor/ceil/trunc and the jumps
of remainder/fmod; prod with one and two zeros and its double backward, cumprod through zeros; std/var of one
element and of equal elements; cosine_similarity/normalize of a zero vector and pairwise_distance's eps; the NaN
gradient of ``where`` and the safe-where trick, nan_to_num and masked_fill; Hessians at these points; and forward
AD (dual numbers) through them. Gradients are printed by ``tolist()`` with their sign bits, so that ``-0.0``,
NaN and inf show.

Differences these programs found, now fixed (``tests/ops/test_program30_findings_vs_torch.py``):
- the gradient of a selection along a dim (max/min/median/nanmedian/mode/kthvalue/sort/msort/topk, quantile) was
  built by ``index_put``, so a double-backward graph showed IndexPutBackward0 where torch's
  ``zeros.scatter_(dim, indices, grad)`` shows ScatterBackward0; a whole-tensor max/min/median's was
  ``mask * (grad / count)`` (MulBackward0) for torch's ``zeros.masked_fill_(mask, grad / count)``
  (MaskedFillBackward1); maximum/minimum and fmax/fmin ended in ``where`` (WhereBackward0) for torch's
  ``masked_fill`` (MaskedFillBackward0);
- cdist and pdist with p < 1 gave NaN gradients where a coordinate of two points agrees (0 * inf), torch 0;
- ``dist(x, y, 0)`` with ``y`` requiring grad failed in backward with a TypeError from ``neg``; torch raises
  its RuntimeError "Expected a proper Tensor but got None (or an undefined Tensor in C++) ...".

Left: a gradient torch knows to be zero (abs's double backward, sign's and round's) is a ZeroTensor, whose
``tolist()``/``numpy()`` torch refuses ("tolist() shouldn't be called on a tensor with unallocated storage");
tracegrad's is an ordinary zero tensor (``_exact`` clones first, which torch allows). logit's gradient at -0.0
outside grad mode is +inf in torch's scalar loop and -inf in its vector blocks (tracegrad: -inf throughout).
maximum/minimum/fmax/fmin/clamp/max of 0.0 against -0.0 pick the zero by torch's SIMD block layout (its scalar
loop keeps the first operand, its vector code the second); tracegrad's choice is NumPy's. A few double-backward
graphs are shaped differently below their first node (amax's UnsqueezeBackward0 for torch's ViewBackward0,
xlogy with a Python-number ``other``, erfinv, renorm, trace's IndexFillBackward1, ``x[idx]``'s
IndexPutImplBackward0), and the sign of some zero second derivatives (pairwise_distance with p < 1,
layer_norm) differs.
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _exact(t) -> str:
    """A tensor's values as text, with the sign of each zero (``-0.0`` and ``0.0`` both read as numbers). (A
    gradient torch knows to be zero is a ZeroTensor, whose ``tolist()`` it refuses: its clone is a plain one.)"""
    values = t.detach().clone().reshape(-1).tolist()
    return repr([("-0" if v == 0 and math.copysign(1.0, v) < 0 else v) for v in values])


def _grad_of(lib, f, *points):
    """The gradient of ``f(*xs).sum()`` at ``points`` (each a list of floats), as exact text."""
    xs = [lib.tensor(p, requires_grad=True) for p in points]
    out = f(*xs)
    grads = lib.autograd.grad(out.sum(), xs, allow_unused=True)
    return [_exact(out)] + [("None" if g is None else _exact(g)) for g in grads]


def _activation_kinks(lib, show):
    """The subgradient each activation picks at its kink, in a notebook that plots derivatives."""
    torch, F = lib, lib.nn.functional
    pts = [-1.0, -0.0, 0.0, 1.0, 6.0, 7.0]
    for name, f in [("abs", torch.abs), ("relu", torch.relu), ("relu6", F.relu6), ("hardtanh", F.hardtanh),
                    ("hardtanh(0,6)", lambda x: F.hardtanh(x, 0.0, 6.0)), ("leaky", F.leaky_relu),
                    ("elu", F.elu), ("celu", F.celu), ("selu", F.selu), ("hardswish", F.hardswish),
                    ("hardsigmoid", F.hardsigmoid), ("hardshrink", F.hardshrink), ("softshrink", F.softshrink),
                    ("threshold", lambda x: F.threshold(x, 0.0, -1.0)), ("rrelu eval", F.rrelu),
                    ("silu", F.silu), ("mish", F.mish), ("relu_", lambda x: x.clone().relu_()),
                    ("prelu", lambda x: F.prelu(x, torch.tensor([0.25])))]:
        show(name, *_grad_of(torch, f, pts))
    for name, mod in [("ReLU6", torch.nn.ReLU6()), ("Hardtanh", torch.nn.Hardtanh(-2.0, 2.0)),
                      ("Threshold", torch.nn.Threshold(1.0, 5.0))]:
        show(name, *_grad_of(torch, mod, [-2.0, 1.0, 2.0, 3.0]))
    x = torch.tensor([0.0, 1.0], requires_grad=True)
    g, = torch.autograd.grad(x.abs().sum(), x, create_graph=True)
    show(_exact(g), g.grad_fn.name() if g.grad_fn else None)
    gg, = torch.autograd.grad(g.sum(), x, allow_unused=True)
    show(gg if gg is None else _exact(gg))
    y = torch.tensor([-0.0, 0.0, float("nan")], requires_grad=True)
    show(*_grad_of(torch, torch.relu, y.tolist()), *_grad_of(torch, torch.abs, y.tolist()))


def _clamp_at_bounds(lib, show):
    """Gradient clipping by clamp: scalar bounds at and beyond the edges, tensor bounds (who gets the gradient
    when the input equals the bound), one-sided clamps, clip, a crossed clamp (min > max) and NaN inputs."""
    torch = lib
    pts = [-2.0, -1.0, 0.0, 1.0, 2.0, float("nan")]
    show("clamp", *_grad_of(torch, lambda x: x.clamp(-1, 1), pts))
    show("clip", *_grad_of(torch, lambda x: torch.clip(x, min=-1.0), pts))
    show("clamp_max", *_grad_of(torch, lambda x: x.clamp_max(1.0), pts))
    show("clamp_min", *_grad_of(torch, lambda x: torch.clamp_min(x, 1.0), pts))
    show("crossed", *_grad_of(torch, lambda x: x.clamp(1.0, -1.0), pts))
    lo = [-1.0, -1.0, -1.0, -1.0, 3.0, 0.0]
    hi = [1.0, 1.0, 0.0, 1.0, 2.0, 1.0]
    show("tensor", *_grad_of(torch, lambda x, a, b: torch.clamp(x, a, b), pts, lo, hi))
    show("tensor min", *_grad_of(torch, lambda x, a: torch.clamp(x, min=a), pts, lo))
    show("tensor max", *_grad_of(torch, lambda x, b: x.clip(max=b), pts, hi))
    show("nan bound", *_grad_of(torch, lambda x, a: torch.clamp(x, min=a), [0.0, 1.0], [float("nan"), 0.0]))
    show("broadcast", *_grad_of(torch, lambda x, a: torch.clamp(x, min=a), [[0.0, 1.0], [2.0, -1.0]], [0.0, 1.0]))
    x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
    z = x.clone()
    z.clamp_(max=1.0)
    z.sum().backward()
    show(z.grad_fn.name(), _exact(x.grad))
    show_outcome(show, lambda: torch.clamp(x))
    show_outcome(show, lambda: torch.clamp(torch.tensor([1, 2, 3]), 1.5, 2.5))
    show_outcome(show, lambda: torch.clamp(torch.tensor([1.0]), torch.tensor([0.0]), 2.0))
    show_outcome(show, lambda: torch.clamp(torch.tensor([1, 5]), min=torch.tensor([2.5, 2.5])))


def _ties_in_selections(lib, show):
    """Which element gets the gradient of a maximum when several tie: full reductions spread it, dim reductions
    pick an index, maximum/minimum halve it, median/kthvalue/sort/topk/cummax pick one."""
    torch = lib
    t = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    for name, f in [("max", torch.max), ("min", torch.min), ("amax", torch.amax), ("amin", torch.amin),
                    ("amax1", lambda x: torch.amax(x, 1)), ("amin0", lambda x: x.amin(0)),
                    ("max1", lambda x: x.max(1).values), ("min1", lambda x: torch.min(x, dim=1)[0]),
                    ("median", torch.median), ("median1", lambda x: x.median(1).values),
                    ("nanmedian", torch.nanmedian), ("kth", lambda x: x.kthvalue(2, dim=1).values),
                    ("sort", lambda x: x.sort(dim=1).values[:, :1]),
                    ("sort stable", lambda x: x.sort(dim=1, stable=True, descending=True).values[:, :1]),
                    ("topk", lambda x: x.topk(1, dim=1).values), ("mode", lambda x: x.mode(1).values),
                    ("cummax", lambda x: x.cummax(1).values), ("cummin", lambda x: x.cummin(0).values),
                    ("logcumsumexp", lambda x: x.logcumsumexp(1)), ("max all", lambda x: x.max(dim=None))]:
        show_outcome(show, lambda f=f, name=name: [name, *_grad_of(torch, f, t)])
    a, b = [1.0, 2.0, 3.0, float("nan")], [1.0, 1.0, 4.0, 0.0]
    for name, f in [("maximum", torch.maximum), ("minimum", torch.minimum), ("fmax", torch.fmax),
                    ("fmin", torch.fmin), ("max2", torch.max), ("min2", torch.min)]:
        show(name, *_grad_of(torch, f, a, b))
    x = torch.tensor([2.0, 5.0, 5.0, 1.0, 5.0])
    show(x.max(0), x.argmax(), x.min(0), x.cummax(0), x.cummin(0), x.median(0), x.kthvalue(3), x.mode())
    show(x.topk(2), x.sort(descending=True, stable=True), torch.tensor([float("nan"), 1.0]).max(0))
    show_outcome(show, lambda: _grad_of(torch, lambda v: v.max(), [float("nan"), 1.0, float("nan")]))
    show_outcome(show, lambda: _grad_of(torch, lambda v: v.cummax(0).values, [float("nan"), 1.0, 3.0]))
    show_outcome(show, lambda: _grad_of(torch, lambda v: v.nanmedian(), [float("nan"), 1.0, 3.0, 1.0]))


def _norms_at_zero(lib, show):
    """Norms of a zero vector, a notebook's regulariser at initialisation: values and gradients per p, then
    dist/cdist/pdist on coinciding points and matrix norms of a zero matrix."""
    torch, la = lib, lib.linalg
    zero, mixed = [0.0, 0.0, 0.0], [0.0, -2.0, 1.0]
    for p in [0, 0.5, 1, 2, 3, float("inf"), -float("inf"), -1]:
        show("vector_norm", p, *_grad_of(torch, lambda x, p=p: la.vector_norm(x, p), zero),
             *_grad_of(torch, lambda x, p=p: la.vector_norm(x, p), mixed))
        show("norm", p, *_grad_of(torch, lambda x, p=p: torch.norm(x, p), zero))
        show_outcome(show, lambda p=p: ["dist", p, *_grad_of(torch, lambda x, y: torch.dist(x, y, p), zero, zero)])
        show("dist self", p, *_grad_of(torch, lambda x, p=p: torch.dist(x, torch.zeros(3), p), mixed))
    for p in [0, 0.5, 1, 2, 3, float("inf")]:
        show("cdist", p, *_grad_of(torch, lambda x, y, p=p: torch.cdist(x, y, p), [[0.0, 1.0], [2.0, 2.0]],
                                   [[0.0, 1.0], [1.0, 1.0], [0.0, 3.0]]))
        show("pdist", p, *_grad_of(torch, lambda x, p=p: torch.nn.functional.pdist(x, p),
                                   [[0.0, 1.0], [0.0, 1.0], [3.0, 1.0], [0.0, -1.0]]))
    for ord in ["fro", "nuc", 1, float("inf"), 2]:
        show_outcome(show, lambda ord=ord: _grad_of(torch, lambda m: la.matrix_norm(m, ord), [[0.0, 0.0],
                                                                                             [0.0, 0.0]]))
    show(*_grad_of(torch, lambda x: la.norm(x), [[0.0, 0.0], [0.0, 0.0]]))
    show(*_grad_of(torch, lambda x: x.norm(dim=1, keepdim=True), [[0.0, 0.0], [3.0, 4.0]]))
    x = torch.zeros(3, requires_grad=True)
    g, = torch.autograd.grad(x.norm(), x, create_graph=True)
    show(_exact(g), g.grad_fn.name())
    show_outcome(show, lambda: _exact(torch.autograd.grad(g.sum(), x)[0]))
    h = torch.autograd.functional.hessian(lambda v: v.pow(2).sum().sqrt(), torch.tensor([0.0, 3.0]))
    show(_exact(h))


def _roots_and_powers_at_zero(lib, show):
    """sqrt/rsqrt/pow at zero and on negative bases, tensor exponents (the gradient to an exponent on a zero
    base), ``x ** 0``, and the second derivatives at those points."""
    torch = lib
    pts = [0.0, -0.0, 1.0, -1.0, 4.0]
    for name, f in [("sqrt", torch.sqrt), ("rsqrt", torch.rsqrt), ("pow0", lambda x: x ** 0),
                    ("pow0.5", lambda x: x ** 0.5), ("pow1", lambda x: x.pow(1)), ("pow2", lambda x: x ** 2),
                    ("pow-1", lambda x: x ** -1), ("pow-0.5", lambda x: torch.pow(x, -0.5)),
                    ("pow3", lambda x: x ** 3), ("pow1.5", lambda x: x ** 1.5), ("square", torch.square),
                    ("reciprocal", torch.reciprocal), ("rpow", lambda x: 2.0 ** x), ("0**x", lambda x: 0.0 ** x),
                    ("cbrt-ish", lambda x: x.sign() * x.abs() ** (1 / 3)), ("float_power", lambda x:
                                                                            torch.float_power(x, 0.5))]:
        show(name, *_grad_of(torch, f, pts))
    bases, exps = [0.0, 0.0, 0.0, -2.0, -2.0, 2.0], [0.0, 1.0, -1.0, 2.0, 0.5, 0.0]
    show("pow tt", *_grad_of(torch, torch.pow, bases, exps))
    show("pow t0", *_grad_of(torch, lambda b, e: b ** e, [0.0], [[0.0], [2.0]]))
    show("int exp", *_grad_of(torch, lambda e: torch.pow(torch.tensor([0, 2]), e), [0.0, 1.0]))
    for f in [torch.sqrt, lambda x: x ** 2, lambda x: x ** 0.5, lambda x: x ** 0, torch.rsqrt, lambda x: x ** 3]:
        x = torch.tensor([0.0, 1.0], requires_grad=True)
        g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        gg = torch.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else None
        show(_exact(g), g.grad_fn.name() if g.grad_fn else None, None if gg is None else _exact(gg))
    show_outcome(show, lambda: torch.tensor([0, 2]) ** -1)
    show_outcome(show, lambda: _exact(torch.tensor([0.0, -8.0]) ** (1 / 3)))


def _logs_and_special_points(lib, show):
    """The points textbooks leave out: atan2(0, 0), log(0), xlogy(0, 0), sinc(0), entr(0), log1p(-1), logit at
    the ends, and the -inf rows of logsumexp/softmax/log_softmax."""
    torch, F, sp = lib, lib.nn.functional, lib.special
    show("atan2", *_grad_of(torch, torch.atan2, [0.0, 0.0, -0.0, 1.0], [0.0, -0.0, 0.0, 0.0]))
    show("arctan2", *_grad_of(torch, lambda y: torch.arctan2(y, torch.tensor(0.0)), [0.0, 1.0]))
    for name, f in [("log", torch.log), ("log2", torch.log2), ("log10", torch.log10), ("log1p", torch.log1p),
                    ("sinc", torch.sinc), ("entr", sp.entr), ("logit eps", lambda x: x.logit(1e-3)),
                    ("erfinv", torch.erfinv), ("acos", torch.acos), ("asin", torch.asin), ("atanh", torch.atanh),
                    ("lgamma", torch.lgamma), ("digamma", torch.digamma), ("xlogx", lambda x: torch.xlogy(x, x)),
                    ("i0e", sp.i0e), ("ndtri", sp.ndtri), ("log_ndtr", sp.log_ndtr), ("sgn", torch.sgn)]:
        show(name, *_grad_of(torch, f, [0.0, -0.0, 1.0, -1.0]))
    show("logit", *_grad_of(torch, torch.logit, [0.0, 1.0, 0.5, 2.0]))  # (not at -0.0: see Left)
    show("xlogy", *_grad_of(torch, torch.xlogy, [0.0, 0.0, 1.0, 0.0], [0.0, 1.0, 0.0, float("nan")]))
    show("xlog1py", *_grad_of(torch, sp.xlog1py, [0.0, 0.0, 1.0], [-1.0, 0.0, -1.0]))
    show("xlogy scalar", *_grad_of(torch, lambda y: sp.xlogy(0.0, y), [0.0, 2.0]))
    ninf = float("-inf")
    rows = [[ninf, ninf, ninf], [0.0, ninf, 1.0], [1000.0, 0.0, -1000.0]]
    show("logsumexp", *_grad_of(torch, lambda x: x.logsumexp(1), rows))
    show("logsumexp all", *_grad_of(torch, lambda x: torch.logsumexp(x, (0, 1)), [[ninf, ninf]]))
    show("softmax", *_grad_of(torch, lambda x: x.softmax(1)[:, 0], rows))
    show("log_softmax", *_grad_of(torch, lambda x: F.log_softmax(x, 1)[:, 2], rows))
    show("softmin", *_grad_of(torch, lambda x: F.softmin(x, 1)[:, 1], rows))
    show("logaddexp", *_grad_of(torch, torch.logaddexp, [ninf, 0.0, float("inf")], [ninf, ninf, float("inf")]))
    show("logaddexp2", *_grad_of(torch, torch.logaddexp2, [ninf, 1.0], [ninf, 1.0]))
    show("softplus", *_grad_of(torch, lambda x: F.softplus(x, beta=2, threshold=5), [2.5, 2.6, -100.0, 0.0]))
    show("logsigmoid", *_grad_of(torch, F.logsigmoid, [-1000.0, 0.0, 1000.0]))
    show("hypot", *_grad_of(torch, torch.hypot, [0.0, 3.0], [0.0, 4.0]))


def _zero_gradients_and_jumps(lib, show):
    """Step functions have zero gradients everywhere (not None), and remainder/fmod jump: the gradient to each
    argument at and around the jumps, with negative divisors."""
    torch = lib
    pts = [-1.5, -0.5, -0.0, 0.0, 0.5, 2.5]
    for name, f in [("sign", torch.sign), ("round", torch.round), ("round2", lambda x: x.round(decimals=1)),
                    ("floor", torch.floor), ("ceil", torch.ceil), ("trunc", torch.trunc), ("fix", torch.fix),
                    ("frac", torch.frac), ("signbit float", lambda x: x * x.signbit()),
                    ("heaviside", lambda x: torch.heaviside(x, torch.tensor(0.5)) * x),
                    ("floor_divide", lambda x: torch.floor_divide(x, 2.0)), ("div floor", lambda x: x.div(
                        2.0, rounding_mode="floor")), ("div trunc", lambda x: torch.div(x, 2.0, rounding_mode="trunc"))]:
        show(name, *_grad_of(torch, f, pts))
    a, b = [5.0, -5.0, 4.0, 4.0, 0.0, 3.0], [2.0, 2.0, 2.0, -2.0, 2.0, -2.5]
    for name, f in [("remainder", torch.remainder), ("fmod", torch.fmod), ("%", lambda x, y: x % y),
                    ("floor_divide t", torch.floor_divide), ("copysign", torch.copysign),
                    ("div floor t", lambda x, y: x.div(y, rounding_mode="floor"))]:
        show(name, *_grad_of(torch, f, a, b))
    show("rem scalar", *_grad_of(torch, lambda x: 7.0 % x, [2.0, -3.0]))
    show("fmod zero", *_grad_of(torch, torch.fmod, [1.0, 0.0], [0.0, 0.0]))
    x = torch.tensor([1.2, 2.7], requires_grad=True)
    y = x.round()
    show(y.grad_fn.name(), torch.round(x).requires_grad, x.sign().grad_fn.name())
    y.sum().backward()
    show(_exact(x.grad))
    ste = x + (x.round() - x).detach()
    ste.sum().backward()
    show(_exact(x.grad), ste.grad_fn.name())


def _prod_with_zeros(lib, show):
    """prod's gradient with no zero, one zero and two zeros (the classic ``prod / x`` bug), along a dim, its
    second derivatives, cumprod through zeros."""
    torch = lib
    for pts in [[2.0, 3.0, 4.0], [2.0, 0.0, 4.0], [0.0, 3.0, 0.0], [0.0, 0.0, 0.0], [-0.0, 2.0]]:
        show("prod", *_grad_of(torch, torch.prod, pts))
        x = torch.tensor(pts, requires_grad=True)
        h = torch.autograd.functional.hessian(lambda v: v.prod(), x.detach())
        show("hessian", _exact(h))
        show("cumprod", *_grad_of(torch, lambda v: v.cumprod(0), pts))
    m = [[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.0, 2.0, 3.0]]
    show("prod dim", *_grad_of(torch, lambda v: v.prod(1), m), *_grad_of(torch, lambda v: v.prod(0, True), m))
    show("prod dtype", *_grad_of(torch, lambda v: v.prod(dtype=torch.float64), [0.0, 2.0]))
    x = torch.tensor([0.0, 2.0, 3.0], requires_grad=True)
    g, = torch.autograd.grad(x.prod(), x, create_graph=True)
    show(_exact(g), g.grad_fn.name())
    gg, = torch.autograd.grad(g[0], x)
    show(_exact(gg))
    c = torch.tensor([1.0, 0.0, 2.0, 0.0, 3.0], requires_grad=True)
    g, = torch.autograd.grad(c.cumprod(0).sum(), c, create_graph=True)
    show(_exact(g), _exact(torch.autograd.grad(g.sum(), c)[0]))
    show_outcome(show, lambda: torch.tensor([1, 0, 3]).prod().dtype)


def _degenerate_statistics(lib, show):
    """std/var of one element (the degrees-of-freedom warning, NaN values and gradients), of equal elements
    (the std gradient at zero spread), every correction, var_mean/std_mean and layer-norm-like standardising."""
    torch = lib
    for pts in [[3.0], [2.0, 2.0, 2.0], [1.0, 2.0, 3.0]]:
        for name, f in [("std", torch.std), ("var", torch.var), ("std0", lambda v: v.std(correction=0)),
                        ("var0", lambda v: v.var(unbiased=False)), ("std2", lambda v: v.std(correction=2)),
                        ("std_mean", lambda v: torch.std_mean(v)[0]), ("var_mean", lambda v: sum(
                            torch.var_mean(v, correction=0)))]:
            show(name, *_grad_of(torch, f, pts))
    z = [[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]
    show("standardise", *_grad_of(torch, lambda v: ((v - v.mean(1, True)) / v.std(1, keepdim=True)).pow(2), z))
    show("eps", *_grad_of(torch, lambda v: ((v - v.mean(1, True)) / (v.var(1, True, True) + 1e-5).sqrt()), z))
    show("layer_norm", *_grad_of(torch, lambda v: torch.nn.functional.layer_norm(v, (3,)).pow(3), z))
    show(torch.tensor([[1.0], [2.0]]).std(1), torch.tensor([]).mean(), torch.tensor([]).var())
    x = torch.tensor([2.0, 2.0], requires_grad=True)
    g, = torch.autograd.grad(x.var(), x, create_graph=True)
    show(_exact(g), _exact(torch.autograd.grad(g.sum(), x)[0]))


def _zero_vectors_and_where(lib, show):
    """A zero embedding: cosine_similarity/normalize and their eps, pairwise_distance's eps; then the famous NaN
    gradient of ``where`` over an unselected sqrt(-1) or 1/0, the safe-where trick, nan_to_num and masked_fill."""
    torch, F = lib, lib.nn.functional
    show("cos", *_grad_of(torch, lambda a, b: F.cosine_similarity(a, b, dim=0), [0.0, 0.0], [1.0, 2.0]))
    show("cos both", *_grad_of(torch, lambda a, b: F.cosine_similarity(a, b, dim=0), [0.0, 0.0], [0.0, 0.0]))
    show("cos tiny", *_grad_of(torch, lambda a, b: F.cosine_similarity(a, b, dim=0, eps=0.1), [0.01, 0.0],
                               [1.0, 0.0]))
    show("normalize", *_grad_of(torch, lambda a: F.normalize(a, dim=1), [[0.0, 0.0], [3.0, 4.0]]))
    show("normalize p1", *_grad_of(torch, lambda a: F.normalize(a, p=1, dim=0, eps=0.5), [0.1, -0.2]))
    show("pairwise", *_grad_of(torch, F.pairwise_distance, [[0.0, 0.0], [1.0, 1.0]], [[0.0, 0.0], [1.0, 1.0]]))
    show("pairwise eps0", *_grad_of(torch, lambda a, b: F.pairwise_distance(a, b, eps=0.0), [[0.0, 0.0]],
                                    [[0.0, 0.0]]))
    show("pairwise p1", *_grad_of(torch, lambda a, b: F.pairwise_distance(a, b, p=1.0), [[0.0, 1.0]],
                                  [[0.0, 0.0]]))
    show("pairwise inf", *_grad_of(torch, lambda a, b: F.pairwise_distance(a, b, p=float("inf")),
                                   [[1.0, 1.0]], [[0.0, 0.0]]))
    pts = [-1.0, 0.0, 4.0]
    show("where sqrt", *_grad_of(torch, lambda x: torch.where(x > 0, x.sqrt(), torch.zeros_like(x)), pts))
    show("safe where", *_grad_of(torch, lambda x: torch.where(
        x > 0, torch.where(x > 0, x, torch.ones_like(x)).sqrt(), 0.0), pts))
    show("where 1/x", *_grad_of(torch, lambda x: torch.where(x != 0, 1 / x, x), pts))
    show("where scalar", *_grad_of(torch, lambda x: torch.where(x > 0, x, 0.0), pts))
    show("where both", *_grad_of(torch, lambda x, y: torch.where(x > y, x, y), [1.0, 2.0], [1.0, 3.0]))
    show("masked_fill", *_grad_of(torch, lambda x: x.log().masked_fill(x <= 0, 0.0), pts))
    show("masked_fill nan", *_grad_of(torch, lambda x: x.masked_fill(x < 0, float("nan")), pts))
    show("masked_fill t", *_grad_of(torch, lambda x, v: x.masked_fill(x < 0, v), pts, 2.0))
    inf, nan = float("inf"), float("nan")
    show("nan_to_num", *_grad_of(torch, torch.nan_to_num, [nan, inf, -inf, 1.0]))
    show("nan_to_num args", *_grad_of(torch, lambda x: x.nan_to_num(0.0, 1.0, -1.0), [nan, inf, -inf, 1.0]))
    show("nan_to_num log", *_grad_of(torch, lambda x: x.log().nan_to_num(), pts))
    show("nansum", *_grad_of(torch, torch.nansum, [nan, 2.0]), *_grad_of(torch, torch.nanmean, [nan, 2.0]))
    show("isnan mask", *_grad_of(torch, lambda x: x[~x.isnan()], [nan, 2.0]))


def _hessians_at_kinks(lib, show):
    """Second derivatives (create_graph) and Hessians at the kinks: they are zero, not None, where the first
    derivative is piecewise constant, and graphs a user can keep differentiating."""
    torch, F = lib, lib.nn.functional
    pts = [-1.0, 0.0, 0.5, 1.0]
    for name, f in [("abs", torch.abs), ("relu", F.relu), ("clamp", lambda x: x.clamp(0, 1) ** 2),
                    ("hardtanh", lambda x: F.hardtanh(x) * x), ("max", lambda x: x.max() * x),
                    ("amax", lambda x: x.amax() ** 2), ("maximum", lambda x: torch.maximum(x, 1 - x) ** 2),
                    ("where", lambda x: torch.where(x > 0, x ** 2, -x)), ("sort", lambda x: x.sort().values ** 3),
                    ("norm", lambda x: x.norm() ** 3), ("logsumexp", lambda x: x.logsumexp(0)),
                    ("sign", lambda x: x.sign() * x ** 2), ("round", lambda x: x.round() * x),
                    ("remainder", lambda x: torch.remainder(x, 0.5) ** 2),
                    ("smooth_l1", lambda x: F.smooth_l1_loss(x, torch.zeros(4), beta=0.5)),
                    ("huber", lambda x: F.huber_loss(x, torch.zeros(4), delta=1.0)),
                    ("l1", lambda x: F.l1_loss(x, torch.zeros(4))), ("leaky", lambda x: F.leaky_relu(x) ** 2),
                    ("elu", F.elu), ("relu6", lambda x: F.relu6(x * 6) ** 2)]:
        x = torch.tensor(pts, requires_grad=True)
        g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
        gg = torch.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else "no graph"
        show(name, _exact(g), g.grad_fn.name() if g.grad_fn else None,
             gg if isinstance(gg, str) or gg is None else _exact(gg))
    h = torch.autograd.functional.hessian(lambda x: torch.abs(x).sum() + x.prod(), torch.tensor([0.0, 0.0, 2.0]))
    show(_exact(h))
    for name, f in [("max", torch.max), ("median", torch.median), ("maximum", lambda x: torch.maximum(x, 1 - x)),
                    ("fmin", lambda x: torch.fmin(x, x.flip(0))), ("max dim", lambda x: x.max(0).values),
                    ("topk", lambda x: x.topk(2).values), ("kthvalue", lambda x: x.kthvalue(2).values)]:
        x = torch.tensor(pts, requires_grad=True)
        g, = torch.autograd.grad(f(x).pow(2).sum(), x, create_graph=True)
        show(name, g.grad_fn.name(), [n.name() if n else None for n, _ in g.grad_fn.next_functions])


def _dual_numbers_at_kinks(lib, show):
    """Forward-mode AD at the same points: the tangent each op picks at a kink or tie, and at zeros of
    roots/norms/prod, beside the reverse-mode gradient."""
    torch, fwAD, F = lib, lib.autograd.forward_ad, lib.nn.functional
    pts = [-1.0, 0.0, 0.0, 2.0]
    tangent = torch.tensor([1.0, 1.0, -1.0, 0.5])
    for name, f in [("abs", torch.abs), ("relu", torch.relu), ("hardtanh", F.hardtanh),
                    ("relu6", lambda x: F.relu6(x * 3)), ("clamp", lambda x: x.clamp(0, 2)),
                    ("clamp t", lambda x: x.clamp(torch.zeros(4), torch.full((4,), 2.0))),
                    ("leaky", F.leaky_relu), ("sqrt", torch.sqrt), ("pow0.5", lambda x: x ** 0.5),
                    ("pow0", lambda x: x ** 0), ("pow2", lambda x: x ** 2), ("max", lambda x: x.max()),
                    ("amax", lambda x: x.amax()), ("max0", lambda x: x.max(0).values),
                    ("maximum", lambda x: torch.maximum(x, torch.zeros(4))), ("min", torch.min),
                    ("sort", lambda x: x.sort().values), ("topk", lambda x: x.topk(2).values),
                    ("median", torch.median), ("cummax", lambda x: x.cummax(0).values),
                    ("norm", torch.norm), ("norm1", lambda x: x.norm(p=1)), ("norm inf", lambda x: x.norm(
                        p=float("inf"))), ("prod", torch.prod), ("sign", torch.sign), ("round", torch.round),
                    ("remainder", lambda x: x.remainder(2.0)), ("fmod", lambda x: x.fmod(2.0)),
                    ("where", lambda x: torch.where(x > 0, x, 0.0)), ("logsumexp", lambda x: x.logsumexp(0)),
                    ("xlogy", lambda x: torch.xlogy(x, x)), ("atan2", lambda x: torch.atan2(x, x)),
                    ("sinc", torch.sinc), ("nan_to_num", lambda x: x.log().nan_to_num()),
                    ("std", torch.std), ("softmax", lambda x: x.softmax(0))]:
        with fwAD.dual_level():
            dual = fwAD.make_dual(torch.tensor(pts), tangent)
            show_outcome(show, lambda f=f, dual=dual, name=name: [name, _exact(fwAD.unpack_dual(f(dual)).tangent)]
                         if fwAD.unpack_dual(f(dual)).tangent is not None else [name, None])
    with fwAD.dual_level():
        z = fwAD.make_dual(torch.zeros(3), torch.ones(3))
        out = torch.linalg.vector_norm(z)
        p, t = fwAD.unpack_dual(out)
        show(_exact(p), None if t is None else _exact(t))
        show_outcome(show, lambda: _exact(fwAD.unpack_dual(torch.cdist(z[None, :, None], z[None, :, None])).tangent))


PROGRAMS = [
    _activation_kinks,
    _clamp_at_bounds,
    _ties_in_selections,
    _norms_at_zero,
    _roots_and_powers_at_zero,
    _logs_and_special_points,
    _zero_gradients_and_jumps,
    _prod_with_zeros,
    _degenerate_statistics,
    _zero_vectors_and_where,
    _hessians_at_kinks,
    _dual_numbers_at_kinks,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
