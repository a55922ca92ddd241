"""Gradients laid out as PyTorch's backward formulas and kernels lay them out, where the operand order or the
kernel's allocation decides: each case runs one program in both libraries, on inputs and incoming gradients in
different layouts (contiguous, transposed, channels-last), and compares the strides of every gradient (values
too, loosely: the gradient tests compare them closely)."""

from __future__ import annotations

import itertools

import pytest
from _lib import assert_close, np, recorded_graph, tg, torch


def _tensor(lib, shape: tuple, seed: int, order=None, dtype=np.float64, requires_grad: bool = False):
    """A tensor of ``shape`` whose memory holds its dims in ``order`` (outermost first; None: C order)."""
    order = tuple(range(len(shape))) if order is None else tuple(order)
    values = np.random.RandomState(seed).randn(*(shape[d] for d in order)).astype(dtype)
    t = lib.tensor(values).permute(*np.argsort(order))
    return t.requires_grad_() if requires_grad else t


def _channels_last(ndim: int) -> tuple:
    return (0,) + tuple(range(2, ndim)) + (1,)


def _transposed(ndim: int) -> tuple:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)


def _gradient_strides(program):
    """(strides, values) of the gradients ``program(lib)`` returns, in each library."""
    seen = {}
    for lib in (tg, torch):
        grads = program(lib)
        seen[lib] = ([None if g is None else g.stride() for g in grads], grads)
    assert seen[tg][0] == seen[torch][0]
    assert_close(list(seen[tg][1]), list(seen[torch][1]), rtol=1e-4, atol=1e-5)


# ---- the activations' backward kernels: self before grad_output ---------------------------------------------


@pytest.mark.parametrize("x_order, g_order", [(None, (1, 0)), ((1, 0), None), ((1, 0), (1, 0))])
@pytest.mark.parametrize("call", ["leaky_relu", "rrelu_eval", "rrelu_train"])
def test_leaky_relu_and_rrelu_gradients(call, x_order, g_order):
    """leaky_relu_backward iterates over self first (rrelu in evaluation calls it); rrelu in training returns
    ``noise * grad_output``, its noise contiguous."""
    def program(lib):
        x = _tensor(lib, (3, 4), 0, x_order, requires_grad=True)
        F = lib.nn.functional
        if call == "leaky_relu":
            y = F.leaky_relu(x, 0.1)
        else:
            lib.manual_seed(0)
            y = F.rrelu(x, 0.1, 0.3, training=call == "rrelu_train")
        return lib.autograd.grad(y, x, _tensor(lib, (3, 4), 1, g_order))
    _gradient_strides(program)


@pytest.mark.parametrize("x_order, g_order", [(None, (1, 0)), ((1, 0), None), ((1, 0), (1, 0))])
@pytest.mark.parametrize("call", ["relu", "threshold", "relu_then_exp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_relu_and_threshold_gradients(call, x_order, g_order, create_graph):
    """threshold_backward iterates over self first too: relu's raw rule of the plain backward and the dispatched
    operator under create_graph lay the gradient out alike (exp's rule, g * result, stays grad first)."""
    def program(lib):
        x = _tensor(lib, (3, 4), 0, x_order, requires_grad=True)
        y = {"relu": lib.relu, "threshold": lambda t: lib.nn.functional.threshold(t, 0.1, 0.0),
             "relu_then_exp": lambda t: lib.exp(lib.relu(t))}[call](x)
        return lib.autograd.grad(y, x, _tensor(lib, (3, 4), 1, g_order), create_graph=create_graph)
    _gradient_strides(program)


# ---- losses ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("x_order, t_order", [(None, (1, 0)), ((1, 0), None), ((1, 0), (1, 0))])
@pytest.mark.parametrize("pos_weight, weight", [(False, False), (True, False), (True, True)])
def test_bce_with_logits_target_gradient(pos_weight, weight, x_order, t_order, reduction):
    """The target's gradient: ``log_sigmoid(-x) - log_sigmoid(x) * pos_weight`` in log_sigmoid's contiguous
    result, then times grad_output and weight in place; ``-x * grad_output`` without pos_weight."""
    def program(lib):
        x = _tensor(lib, (4, 3), 0, x_order, requires_grad=True)
        t = _tensor(lib, (4, 3), 1, t_order, requires_grad=True)
        w = _tensor(lib, (4, 3), 2, (1, 0)).abs() if weight else None
        p = _tensor(lib, (3,), 3).abs() if pos_weight else None
        y = lib.nn.functional.binary_cross_entropy_with_logits(x, t, w, pos_weight=p, reduction=reduction)
        g = _tensor(lib, (4, 3), 4, (1, 0)) if reduction == "none" else lib.ones_like(y)
        return lib.autograd.grad(y, (x, t), g)
    _gradient_strides(program)


# ---- contractions ---------------------------------------------------------------------------------------------


def test_reshape_copies_contiguously():
    """A reshape that cannot view copies with ``clone(contiguous_format)``: a permuted copy viewed with its own
    strides would lay out the result (and mm's column-major backward branch) otherwise."""
    strides = []
    for lib in (tg, torch):
        b = lib.as_strided(lib.tensor(np.arange(200.0)), (2, 3, 5), (1, 4, 24))
        strides.append(b.permute(1, 0, 2).reshape(6, 5).stride())
    assert strides[0] == strides[1]


def test_tensordot_gradients_of_gapped_inputs():
    def program(lib):
        a = lib.as_strided(lib.tensor(np.arange(200.0)), (3, 2, 4), (16, 8, 1)).detach().requires_grad_()
        b = lib.as_strided(lib.tensor(np.arange(200.0)), (2, 3, 5), (1, 4, 24)).detach().requires_grad_()
        y = lib.tensordot(a, b, ([0, 1], [1, 0]))
        return lib.autograd.grad(y, (a, b), lib.ones_like(y))
    _gradient_strides(program)


@pytest.mark.parametrize("w_order", [None, (0, 2, 1), (2, 1, 0)])
def test_bilinear_gradients(w_order):
    """_trilinear accumulates into a fresh contiguous ``zeros``: every gradient is contiguous."""
    def program(lib):
        x1 = _tensor(lib, (3, 2), 0, (1, 0), requires_grad=True)
        x2 = _tensor(lib, (3, 4), 1, requires_grad=True)
        w = _tensor(lib, (5, 2, 4), 2, w_order, requires_grad=True)
        y = lib.nn.functional.bilinear(x1, x2, w)
        return lib.autograd.grad(y, (x1, x2, w), _tensor(lib, (3, 5), 3, (1, 0)))
    _gradient_strides(program)


@pytest.mark.parametrize("w_order", [(0, 2, 1), (2, 1, 0), (1, 0, 2)])
def test_conv_tbc_gradients(w_order):
    """conv_tbc_backward's zeros are LEGACY_CONTIGUOUS_MEMORY_FORMAT (its input must view as (rows, planes))."""
    def program(lib):
        x = _tensor(lib, (5, 2, 3), 0, requires_grad=True)
        w = _tensor(lib, (2, 3, 4), 1, w_order, requires_grad=True)
        b = _tensor(lib, (4,), 2, requires_grad=True)
        y = lib.conv_tbc(x, w, b, 1)
        return lib.autograd.grad(y, (x, w, b), _tensor(lib, tuple(y.shape), 3))
    _gradient_strides(program)


# ---- attention ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("order", [None, (0, 2, 1, 3), (2, 0, 1, 3)])
@pytest.mark.parametrize("kv_heads", [4, 2])
def test_fused_attention_gradients(order, kv_heads):
    """The fused CPU kernel's backward allocates each gradient in (batch, length, heads, embed) memory, whatever
    the inputs' layouts (grouped key/value heads included)."""
    def program(lib):
        q = _tensor(lib, (2, 4, 3, 5), 0, order, requires_grad=True)
        k = _tensor(lib, (2, kv_heads, 6, 5), 1, order, requires_grad=True)
        v = _tensor(lib, (2, kv_heads, 6, 5), 2, order, requires_grad=True)
        y = lib.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        return lib.autograd.grad(y, (q, k, v), _tensor(lib, (2, 4, 3, 5), 3, (1, 0, 2, 3)))
    _gradient_strides(program)


# ---- upsampling -----------------------------------------------------------------------------------------------

UPSAMPLINGS = [("bicubic", 4, False), ("bicubic", 4, True), ("bilinear", 4, False), ("nearest", 4, None),
               ("nearest-exact", 4, None), ("trilinear", 5, False), ("nearest", 5, None), ("nearest-exact", 5, None)]


@pytest.mark.parametrize("x_cl, g_cl", list(itertools.product((False, True), repeat=2)))
@pytest.mark.parametrize("mode, ndim, align_corners", UPSAMPLINGS)
def test_upsampling_gradients(mode, ndim, align_corners, x_cl, g_cl):
    """Bicubic 2-d and nearest 3-d backward kernels allocate contiguously; the others keep the incoming
    gradient's suggested memory format."""
    shape = (2, 3, 4, 5, 3)[:ndim]

    def program(lib):
        x = _tensor(lib, shape, 0, _channels_last(ndim) if x_cl else None, requires_grad=True)
        kw = {} if align_corners is None else {"align_corners": align_corners}
        y = lib.nn.functional.interpolate(x, scale_factor=2, mode=mode, **kw)
        g = _tensor(lib, tuple(y.shape), 1, _channels_last(ndim) if g_cl else None)
        return lib.autograd.grad(y, x, g)
    _gradient_strides(program)


# ---- normalisations -------------------------------------------------------------------------------------------

NORMS = [("batch_norm", True), ("batch_norm", False), ("group_norm", True), ("instance_norm", True)]


def _normalised(lib, call: str, training: bool, x, w, b, dtype):
    F = lib.nn.functional
    if call == "batch_norm":
        running = (lib.zeros(3, dtype=dtype), lib.ones(3, dtype=dtype))
        return F.batch_norm(x, *running, w, b, training=training)
    if call == "group_norm":
        return F.group_norm(x, 3, w, b)
    return F.instance_norm(x, weight=w, bias=b)


@pytest.mark.parametrize("x_cl, g_cl", list(itertools.product((False, True), repeat=2)))
@pytest.mark.parametrize("ndim", [4, 5])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("call, training", NORMS)
def test_normalisation_gradients(call, training, dtype, ndim, x_cl, g_cl):
    """batch_norm's and group_norm's backward kernels allocate the input's gradient in the input's suggested
    memory format (channels_last_3d included), whatever grad_output's; evaluation batch_norm too."""
    shape = (2, 3, 4, 5, 3)[:ndim]

    def program(lib):
        x = _tensor(lib, shape, 0, _channels_last(ndim) if x_cl else None, dtype, requires_grad=True)
        w = _tensor(lib, (3,), 1, dtype=dtype).abs().requires_grad_()
        b = _tensor(lib, (3,), 2, dtype=dtype, requires_grad=True)
        y = _normalised(lib, call, training, x, w, b, getattr(lib, dtype))
        assert y.stride() == tuple(x.stride()) or not x_cl or call == "instance_norm"
        g = _tensor(lib, shape, 3, _channels_last(ndim) if g_cl else None, dtype)
        return lib.autograd.grad(y, (x, w, b), g)
    _gradient_strides(program)


def test_group_norm_keeps_channels_last_3d_input():
    """A channels_last_3d input is dense in its suggested format: no copy (CloneBackward0) before the kernel."""
    graphs, strides = [], []
    for lib in (tg, torch):
        x = _tensor(lib, (2, 4, 3, 3, 3), 0, _channels_last(5), requires_grad=True)
        y = lib.nn.functional.group_norm(x, 2)
        graphs.append(recorded_graph([y]))
        strides.append(y.stride())
    assert graphs[0] == graphs[1]
    assert strides[0] == strides[1]
