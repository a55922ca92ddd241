"""Several gradients reaching one input in one backward: the engine's input buffer, as torch's.

Torch's ``InputBuffer::accumulate`` adds a later gradient into the buffered one in place (``old.add_(new)``) when grad
mode is off and the buffer holds the only reference to a plain, dense, non-view tensor and to its storage; otherwise
it makes ``old + new``. That is observable: the ``_version`` of the leaf's ``.grad`` (which adopts the buffer), of a
captured or hooked gradient, and which memory ends up in ``.grad``. AccumulateGrad adding into an existing ``.grad``
warns once when the sum breaks the gradient layout contract. Each case runs the same program on torch and tracegrad
and compares what it observed: versions, strides, dtypes, bits, memory sharing, hook order, warnings.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

from tests._lib import tg, torch, warning_texts

_RNG = np.random.default_rng(7)
_A = _RNG.standard_normal((2, 3)).astype(np.float32)
_B = _RNG.standard_normal((4, 3)).astype(np.float32)
_C = _RNG.standard_normal((3, 4, 2)).astype(np.float32)


def _grad_obs(t) -> tuple | None:
    """What a gradient shows: version, strides, dtype and bits."""
    g = t if t is None or not hasattr(t, "grad") or t.grad is None else t.grad
    if g is None:
        return None
    return g._version, tuple(g.stride()), str(g.dtype).split(".")[-1], g.detach().numpy().tobytes()


def _leaf(lib, a=_A, dtype=None):
    t = lib.tensor(a)
    return (t if dtype is None else t.to(getattr(lib, dtype))).requires_grad_()


# ---- programs: each returns a list of observations ---------------------------------------------------------------

def square(lib):
    w = _leaf(lib)
    (w * w).sum().backward()
    return [_grad_obs(w)]


def sum_of_same_leaf(lib):
    w = _leaf(lib)
    (w + w).sum().backward()  # two expanded (non-dense) gradients: added out of place
    return [_grad_obs(w)]


def cube(lib):
    w = _leaf(lib)
    (w * w * w).sum().backward()  # three gradients: two in-place additions
    return [_grad_obs(w)]


def three_uses(lib):
    w = _leaf(lib)
    (w * 3 * (w + 1) * w.neg()).sum().backward()  # (ops whose kernels agree with torch bit for bit)
    return [_grad_obs(w)]


def same_tensor_twice(lib):
    w = _leaf(lib)
    y = w * 3
    ((y + y) * 1).backward(lib.ones(2, 3))  # add hands one tensor to both edges: use_count 2, out of place
    return [_grad_obs(w)]


def half_and_double(lib):
    out = []
    for dt in ("float16", "float64"):
        w = _leaf(lib, dtype=dt)
        (w * w * 3).sum().backward()
        out.append(_grad_obs(w))
    return out


def create_graph(lib):
    w = _leaf(lib)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (w * w).sum().backward(create_graph=True)  # grad mode on: old + new, recorded
    g = w.grad
    obs = [_grad_obs(w), g.requires_grad, type(g.grad_fn).__name__]
    (second,) = lib.autograd.grad(g.sum(), w)
    return [*obs, _grad_obs(second)]


def retain_graph_twice(lib):
    w = _leaf(lib)
    y = (w * w).sum()
    y.backward(retain_graph=True)
    first = _grad_obs(w)
    y.backward()
    return [first, _grad_obs(w)]


def existing_grad(lib):
    w = _leaf(lib)
    w.grad = lib.zeros(2, 3)
    g0 = w.grad
    (w * w).sum().backward()
    return [_grad_obs(w), g0 is w.grad]


def zero_grad_keeps_tensor(lib):
    lin = lib.nn.Linear(3, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32)))
        lin.bias.zero_()
    x = lib.tensor(_B)
    lin(lin(x)).sum().backward()
    lin.zero_grad(set_to_none=False)
    after_zero = _grad_obs(lin.weight)
    lin(lin(x)).sum().backward()
    return [after_zero, _grad_obs(lin.weight), _grad_obs(lin.bias)]


def retained_non_leaf(lib):
    w = _leaf(lib)
    h = w * 1
    h.retain_grad()
    (h * h * h).sum().backward()
    return [_grad_obs(h), _grad_obs(w)]


def captured_by_grad(lib):
    w = _leaf(lib)
    h = w * 2
    gw, gh = lib.autograd.grad((w * w + h * h).sum(), (w, h))
    return [_grad_obs(gw), _grad_obs(gh)]


def hooks_see_the_sum(lib):
    w = _leaf(lib)
    h = w * 1
    order = []
    h.register_hook(lambda g: order.append(("tensor", g._version)))
    h.grad_fn.register_prehook(lambda gs: order.append(("pre", gs[0]._version)))
    h.grad_fn.register_hook(lambda gi, go: order.append(("post", go[0]._version, gi[0]._version)))
    h.retain_grad()
    (h * h).sum().backward()
    return [order, _grad_obs(h), _grad_obs(w)]


def leaf_prehook_keeps_buffer(lib):
    w = _leaf(lib)
    y = w * w
    acc = y.grad_fn.next_functions[0][0]
    seen = []
    acc.register_prehook(lambda gs: seen.append(gs[0]._version))  # (keeps no reference: the buffer is adopted)
    y.sum().backward()
    return [seen, _grad_obs(w)]


def leaf_prehook_holds_buffer(lib):
    w = _leaf(lib)
    y = w * w
    acc = y.grad_fn.next_functions[0][0]
    held = []
    acc.register_prehook(lambda gs: held.append(gs[0]))  # a reference of the user's: .grad is a copy
    post = []
    w.register_post_accumulate_grad_hook(lambda p: post.append(p.grad._version))
    y.sum().backward()
    return [held[0]._version, held[0].data_ptr() == w.grad.data_ptr(), post, _grad_obs(w)]


def hook_replaces_gradient(lib):
    w = _leaf(lib)
    h = w * 1
    h.register_hook(lambda g: g * 2)
    (h * h).sum().backward()
    return [_grad_obs(w)]


def weight_shared_by_two_linears(lib):
    lib.manual_seed(0)
    l1, l2 = lib.nn.Linear(3, 3), lib.nn.Linear(3, 3)
    with lib.no_grad():
        l1.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32) * 0.5))
        l1.bias.zero_()
    l2.weight = l1.weight
    l2.bias = l1.bias
    l2(l1(lib.tensor(_B))).sum().backward()  # through TBackward0 (a view in torch): out of place
    return [_grad_obs(l1.weight), _grad_obs(l1.bias)]


def functional_linear_twice(lib):
    w = _leaf(lib, np.eye(3, dtype=np.float32))
    b = _leaf(lib, np.ones(3, dtype=np.float32))
    f = lib.nn.functional.linear
    f(f(lib.tensor(_B), w, b), w, b).sum().backward()
    return [_grad_obs(w), _grad_obs(b)]


def broadcast_reductions(lib):
    x = lib.tensor(_A)
    w = _leaf(lib, _A[0])  # (3,): the reduced gradient is a view in torch (sum_to's leading-dim view)
    r = _leaf(lib, _A[:1])  # (1, 3): a keepdim sum, no view
    ((w * x) * w + (r * x) * r).sum().backward()
    return [_grad_obs(w), _grad_obs(r)]


def transposed_leaf(lib):
    w = lib.tensor(_A.T.copy()).t().detach().requires_grad_()
    (w * w).sum().backward()  # gradients laid out as the leaf: dense, added in place
    return [_grad_obs(w)]


def permuted_leaf(lib):
    w = lib.tensor(_C).permute(2, 0, 1).detach().requires_grad_()
    (w * w * w).sum().backward()
    return [_grad_obs(w)]


def through_views(lib):
    w = _leaf(lib)
    (w.t() * w.t()).sum().backward()
    return [_grad_obs(w)]


# ---- the first gradient: adopted, or copied by clone_obey_contract (new_empty_strided + copy_: version 1 for a
# dense leaf; clone: version 0 for one with gaps) ---------------------------------------------------------------

def _gapped_leaf(lib):
    return lib.ones(4, 6)[:, ::2].detach().requires_grad_()


def first_gradient_copies(lib):
    out = []
    w = _leaf(lib)
    held = []
    w.register_hook(lambda g: held.append(g))  # the user holds it: copied
    (w * 2).sum().backward()
    out += [_grad_obs(w), held[0].data_ptr() == w.grad.data_ptr()]
    w = _leaf(lib)
    (w.t() * 2).sum().backward()  # transposed: breaks the contract
    out.append(_grad_obs(w))
    w = _leaf(lib)
    w.sum().backward()  # expanded
    out.append(_grad_obs(w))
    g = lib.ones(2, 3)
    w = _leaf(lib)
    (w + 1).backward(g)  # the user's own gradient
    out += [_grad_obs(w), g.data_ptr() == w.grad.data_ptr()]
    w = _gapped_leaf(lib)
    (w * 2).sum().backward()
    out.append(_grad_obs(w))
    return out


def first_gradient_copies_create_graph(lib):
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for make, loss in ((_leaf, lambda w: (w * w).sum()), (_leaf, lambda w: (w * 2).sum()),
                           (_gapped_leaf, lambda w: (w * w).sum()), (_gapped_leaf, lambda w: (w * 2).sum())):
            w = make(lib)
            loss(w).backward(create_graph=True)
            out += [_grad_obs(w), type(w.grad.grad_fn).__name__]
    return out


def leaf_prehook_sees_adopted_buffer(lib):
    w = _leaf(lib)
    y = w * 2
    seen = []
    y.grad_fn.next_functions[0][0].register_prehook(lambda gs: seen.append(gs[0].data_ptr()))
    y.sum().backward()
    return [seen[0] == w.grad.data_ptr(), _grad_obs(w)]


def linears_3d_and_addmm(lib):
    out = []
    lin = lib.nn.Linear(3, 3)
    with lib.no_grad():
        lin.weight.copy_(lib.tensor(np.eye(3, dtype=np.float32)))
        lin.bias.zero_()
    x = lib.tensor(_B).reshape(2, 2, 3)  # a batched input
    lin(lin(x)).sum().backward()
    out += [_grad_obs(lin.weight), _grad_obs(lin.bias)]
    for bias_shape in ((3,), (1, 3), (4, 3)):
        b = _leaf(lib, np.ones(bias_shape, dtype=np.float32))
        w = _leaf(lib, np.eye(3, dtype=np.float32))
        y = lib.addmm(b, lib.tensor(_B), w)
        lib.addmm(b, y, w).sum().backward()
        out += [_grad_obs(b), _grad_obs(w)]
    return out


PROGRAMS = [square, sum_of_same_leaf, cube, three_uses, same_tensor_twice, half_and_double, create_graph,
            retain_graph_twice, existing_grad, zero_grad_keeps_tensor, retained_non_leaf, captured_by_grad,
            hooks_see_the_sum, leaf_prehook_keeps_buffer, leaf_prehook_holds_buffer, hook_replaces_gradient,
            weight_shared_by_two_linears, functional_linear_twice, broadcast_reductions, transposed_leaf,
            permuted_leaf, through_views, first_gradient_copies, first_gradient_copies_create_graph,
            leaf_prehook_sees_adopted_buffer, linears_3d_and_addmm]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_same_as_torch(program):
    assert program(tg) == program(torch)


def test_in_place_is_observed():
    # (guards the comparison above against both libraries agreeing on "never in place")
    assert square(torch)[0][0] == 1 and cube(torch)[0][0] == 2
    assert weight_shared_by_two_linears(torch)[0][0] == 0


# ---- the gradient layout contract warning ----------------------------------------------------------------------

def _transposed_grad(lib):
    w = _leaf(lib)
    w.grad = lib.zeros(3, 2).t()
    return w


def _observe_warnings(lib, run) -> tuple:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run(lib)
    return [w.category for w in caught], warning_texts(caught), result


def _add_into_transposed(lib):
    w = _transposed_grad(lib)
    (w * 2).sum().backward()
    return _grad_obs(w)


def _add_into_transposed_create_graph(lib):
    w = _transposed_grad(lib)
    lib.autograd.backward((w * 2).sum(), create_graph=True, inputs=[w])
    return _grad_obs(w)


def _grad_dtype_no_warning(lib):
    w = _leaf(lib)
    w.grad_dtype = lib.float64  # (the cast gradient has other byte strides, the same element strides)
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    return _grad_obs(w)


def _create_graph_with_inputs(lib):
    w = _leaf(lib)
    (w * 2).sum().backward(create_graph=True, inputs=[w])  # (torch 2.13 warns of the cycle here too)
    return _grad_obs(w)


def _transposed_leaf_contiguous_grad(lib):
    w = lib.tensor(_A.T.copy()).t().detach().requires_grad_()
    w.grad = lib.zeros(2, 3)
    (w * 2).sum().backward()
    return _grad_obs(w)


def _gapped_grad(lib):
    w = lib.ones(4, requires_grad=True)
    w.grad = lib.zeros(8)[::2]
    (w * 2).sum().backward()
    return _grad_obs(w)


def _size_one_dims(lib):
    w = lib.ones(2, 1, 3, requires_grad=True)
    w.grad = lib.zeros(2, 3).unsqueeze(1)  # differs only in a size-1 dim's stride: obeys the contract
    (w * 2).sum().backward()
    return _grad_obs(w)


@pytest.mark.parametrize("run", [_add_into_transposed, _add_into_transposed_create_graph,
                                 _transposed_leaf_contiguous_grad, _gapped_grad, _size_one_dims,
                                 _grad_dtype_no_warning, _create_graph_with_inputs],
                         ids=lambda f: f.__name__.strip("_"))
def test_layout_contract_warning(run):
    # warn-always, so that torch's TORCH_WARN_ONCE warns in every test
    try:
        torch.set_warn_always(True)
        tg.set_warn_always(True)
        assert _observe_warnings(tg, run) == _observe_warnings(torch, run)
    finally:
        torch.set_warn_always(False)
        tg.set_warn_always(False)


_ONCE = """
import warnings, sys
lib = __import__(sys.argv[1])
counts = []
for _ in range(2):
    w = lib.ones(2, 3, requires_grad=True)
    w.grad = lib.zeros(3, 2).t()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (w * 2).sum().backward()
        (w * 2).sum().backward()
    counts.append(len(caught))
print(counts)
"""


def test_layout_contract_warning_once_per_process():
    # TORCH_WARN_ONCE: the first time in a process only (a fresh process for each library)
    outs = [subprocess.run([sys.executable, "-c", _ONCE, name], capture_output=True, text=True, check=True).stdout
            for name in ("tracegrad", "torch")]
    assert outs[0] == outs[1] == "[1, 0]\n"


# ---- mul's raw backward rule with a Python number ----------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("number", [2, 3, -7, 3001, 2 ** 53 + 1, 0.1, 1e-3, 7.3, True])
def test_mul_by_number_backward(dtype, number):
    a = _RNG.standard_normal(257).astype(np.float32)
    g = _RNG.standard_normal(257).astype(np.float32)

    def run(lib):
        w = _leaf(lib, a, dtype)
        (w * number).backward(lib.tensor(g).to(getattr(lib, dtype)))
        return _grad_obs(w)

    assert run(tg) == run(torch)


# ---- a gradient through a view or another op, meeting another one at the leaf --------------------------------
# (PyTorch's view gradients keep their base alive: never added into; fresh ones are)

_THROUGH = {
    "view": lambda w: w.view(6), "reshape": lambda w: w.reshape(3, 2), "flatten": lambda w: w.flatten(),
    "unsqueeze": lambda w: w.unsqueeze(0), "squeeze": lambda w: w.unsqueeze(1).squeeze(1), "t": lambda w: w.t(),
    "transpose": lambda w: w.transpose(0, 1), "permute": lambda w: w.permute(1, 0),
    "expand": lambda w: w.unsqueeze(0).expand(4, 2, 3), "narrow": lambda w: w.narrow(1, 0, 2),
    "select": lambda w: w[0], "chunk": lambda w: w.chunk(3, 1)[0], "unbind": lambda w: w.unbind(0)[1],
    "mean": lambda w: w.mean(0), "sum_dim": lambda w: w.sum(1), "clone": lambda w: w.clone(),
    "contiguous_t": lambda w: w.t().contiguous(), "double": lambda w: w.double(), "plus0": lambda w: w + 0,
    "relu": lambda w: w.relu(), "neg": lambda w: -w,
}


@pytest.mark.parametrize("name", list(_THROUGH))
def test_through_an_op_then_accumulated(name):
    f = _THROUGH[name]

    def run(lib):
        out = []
        for first in (True, False):  # (the node created later runs first: which gradient is buffered first)
            w = _leaf(lib)
            loss = (f(w) * 3).sum() + (w * w).sum() if first else (w * w).sum() + (f(w) * 3).sum()
            loss.backward()
            out.append(_grad_obs(w))
        w = _leaf(lib)
        (f(w) * f(w)).sum().backward()
        return [*out, _grad_obs(w)]

    assert run(tg) == run(torch)
