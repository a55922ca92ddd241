"""Top-level names added in ops/namespace_extras.py, _runtime.py and nn/_torch_namespace.py, against torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from _precision_state import precisions_kept

import tracegrad as tg

IN_PLACE = ["exp_", "log_", "sin_", "cos_", "tanh_", "sigmoid_", "sqrt_", "neg_", "i0_", "detach_", "zero_", "fill",
            "fill_", "addmv_", "as_strided_", "index_put_", "dropout_", "alpha_dropout", "alpha_dropout_",
            "feature_alpha_dropout", "feature_alpha_dropout_", "feature_dropout", "feature_dropout_",
            "embedding_renorm_", "resize_as_"]
RUNTIME = ["asarray", "result_type", "promote_types", "can_cast", "empty_strided", "scalar_tensor", "get_num_threads",
           "set_num_threads", "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
           "get_default_device", "set_default_device", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_deterministic_debug_mode", "get_deterministic_debug_mode", "get_float32_matmul_precision",
           "set_float32_matmul_precision", "set_flush_denormal", "is_inference", "is_conj", "is_neg", "typename",
           "get_device"]
COPIES = ["alias_copy", "as_strided_copy", "detach_copy", "diagonal_copy", "expand_copy", "permute_copy",
          "select_copy", "slice_copy", "split_copy", "split_with_sizes_copy", "squeeze_copy", "t_copy",
          "transpose_copy", "unbind_copy", "unfold_copy", "unsqueeze_copy", "view_copy", "values_copy",
          "view_as_real_copy", "view_as_complex_copy", "unsafe_split_with_sizes"]
NN = ["kl_div", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "hinge_embedding_loss",
      "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "max_pool1d", "max_pool1d_with_indices",
      "max_pool2d", "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "prelu", "hardshrink",
      "rms_norm", "convolution"]


@pytest.mark.parametrize("name", IN_PLACE + RUNTIME + COPIES + NN)
def test_name_exists(name):
    assert hasattr(torch, name)
    assert callable(getattr(tg, name))


def test_grad_scaler_at_the_top_level():
    assert torch.GradScaler is torch.amp.GradScaler
    assert tg.GradScaler is tg.amp.GradScaler


def _pair(shape, low=0.1, dtype=np.float64, seed=0):
    a = np.random.default_rng(seed).uniform(low, 2.0, shape).astype(dtype)
    return tg.tensor(a), torch.tensor(a)


def _node(t) -> str | None:
    return None if t.grad_fn is None else t.grad_fn.name()


def _same(a, b):
    if isinstance(b, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert tuple(a.shape) == tuple(b.shape)
    assert str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


# ---- in-place functions -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["exp_", "log_", "sin_", "cos_", "tanh_", "sigmoid_", "sqrt_", "neg_", "i0_",
                                  "zero_"])
def test_unary_inplace(name):
    a, b = _pair((3, 4))
    va, vb = a._version, b._version
    ra, rb = getattr(tg, name)(a), getattr(torch, name)(b)
    assert ra is a and rb is b
    assert a._version - va == b._version - vb
    _same(a, b)
    # recorded on a non-leaf with the functional op's node
    xa, xb = _pair((3,))
    xa.requires_grad_(True)
    xb.requires_grad_(True)
    assert _node(getattr(tg, name)(xa * 1)) == _node(getattr(torch, name)(xb * 1))


def test_fill_and_fill_():
    a, b = _pair((2, 3))
    a.requires_grad_(True)
    b.requires_grad_(True)
    for value in (2.5, 7):
        ra, rb = tg.fill(a, value), torch.fill(b, value)
        _same(ra, rb)
        assert _node(ra) == _node(rb) == "FillBackward0"
    ra, rb = tg.fill(a, tg.tensor(3.0)), torch.fill(b, torch.tensor(3.0))
    assert _node(ra) == _node(rb) == "FillBackward1"
    _same(tg.fill(tg.arange(3), 2.5), torch.fill(torch.arange(3), 2.5))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        tg.fill(a, tg.ones(2))
    ca, cb = _pair((3,))
    assert tg.fill_(ca, 4.0) is ca and torch.fill_(cb, 4.0) is cb
    _same(ca, cb)


def test_detach_addmv_as_strided_index_put():
    a, b = _pair((3,))
    assert tg.detach_(a) is a and torch.detach_(b) is b
    (ma, mb), (va, vb), (sa, sb) = _pair((3, 2)), _pair((2,), seed=1), _pair((3,), seed=2)
    assert tg.addmv_(sa, ma, va, beta=2, alpha=0.5) is sa
    torch.addmv_(sb, mb, vb, beta=2, alpha=0.5)
    _same(sa, sb)
    a, b = _pair((6,))
    ra, rb = tg.as_strided_(a, (2, 2), (1, 2), 1), torch.as_strided_(b, (2, 2), (1, 2), 1)
    assert ra is a and rb is b
    _same(a, b)
    a, b = _pair((5,))
    va, vb = a._version, b._version
    tg.index_put_(a, (tg.tensor([0, 3]),), tg.tensor(9.0, dtype=tg.float64), True)
    torch.index_put_(b, (torch.tensor([0, 3]),), torch.tensor(9.0, dtype=torch.float64), True)
    _same(a, b)
    assert a._version - va == b._version - vb


def test_embedding_renorm_and_resize_as_():
    a, b = _pair((5, 3))
    a, b = tg.mul(a, 3), torch.mul(b, 3)
    ra = tg.embedding_renorm_(a, tg.tensor([1, 2]), 1.0, 2.0)
    rb = torch.embedding_renorm_(b, torch.tensor([1, 2]), 1.0, 2.0)
    assert ra is a and rb is b
    _same(a, b)
    leaf = tg.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        tg.embedding_renorm_(leaf, tg.tensor([0]), 1.0, 2.0)
    for shape in ((2, 2), (2, 3)):
        ta, tb = tg.arange(6.0), torch.arange(6.0)
        va, vb = ta._version, tb._version
        assert tg.resize_as_(ta, tg.zeros(shape)) is ta and torch.resize_as_(tb, torch.zeros(shape)) is tb
        assert tuple(ta.shape) == tuple(tb.shape) and ta._version - va == tb._version - vb
        np.testing.assert_array_equal(ta.numpy().reshape(-1)[:4], tb.numpy().reshape(-1)[:4])
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        tg.resize_as_(tg.zeros(3, requires_grad=True), tg.zeros(3))


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"])
def test_dropout_family(name):
    f, f_ = getattr(tg, name), getattr(tg, name + "_")
    x = tg.ones(4, 6, 5, requires_grad=True)
    assert f(x, 0.5, False) is x and f(x, 0.0, True) is x
    y, yt = f(x, 0.5, True), getattr(torch, name)(torch.ones(4, 6, 5, requires_grad=True), 0.5, True)
    assert _node(y) == _node(yt)
    # the output takes two values (kept / dropped), and the feature variants drop whole channels
    assert len(np.unique(y.detach().numpy())) == 2
    ref = np.unique(yt.detach().numpy())
    np.testing.assert_allclose(np.unique(y.detach().numpy()), ref, rtol=1e-6)
    if name.startswith("feature"):
        assert (y.detach().numpy() == y.detach().numpy()[..., :1]).all()
    for p in (-0.1, 1.5):
        with pytest.raises(RuntimeError, match=f"dropout probability has to be between 0 and 1, but got {p}"):
            f(x, p, True)
    if name.startswith("feature"):
        with pytest.raises(RuntimeError, match="Feature dropout requires at least 2 dimensions in the input"):
            f(tg.ones(3), 0.5, True)
    for train in (True, False):
        za, zb = tg.ones(3, 4), torch.ones(3, 4)
        va, vb = za._version, zb._version
        assert f_(za, 0.5, train) is za and getattr(torch, name + "_")(zb, 0.5, train) is zb
        assert za._version - va == zb._version - vb
    _same(f(tg.ones(2, 3), 1.0, True), getattr(torch, name)(torch.ones(2, 3), 1.0, True))


# ---- *_copy -------------------------------------------------------------------------------------------------

COPY_CASES = [
    ("alias_copy", ()), ("as_strided_copy", ((2, 2), (1, 2), 1)), ("diagonal_copy", (1,)),
    ("permute_copy", ((1, 0),)), ("select_copy", (0, 1)), ("slice_copy", (1, 0, 3, 2)), ("split_copy", (2,)),
    ("split_with_sizes_copy", ([1, 2],)), ("t_copy", ()), ("transpose_copy", (0, 1)), ("unbind_copy", (1,)),
    ("unfold_copy", (1, 2, 1)), ("unsqueeze_copy", (0,)), ("view_copy", ((12,),)), ("view_copy", ((2, -1),)),
    ("unsafe_split_with_sizes", ([2, 1],)), ("detach_copy", ()),
]


@pytest.mark.parametrize("name,args", COPY_CASES)
def test_copy_ops(name, args):
    a, b = _pair((3, 4))
    a.requires_grad_(True)
    b.requires_grad_(True)
    ra, rb = getattr(tg, name)(a, *args), getattr(torch, name)(b, *args)
    _same(ra, rb)
    outs_a = ra if isinstance(ra, (tuple, list)) else [ra]
    outs_b = rb if isinstance(rb, (tuple, list)) else [rb]
    for oa, ob in zip(outs_a, outs_b):
        assert oa._base is None and oa.is_contiguous()
        assert _node(oa) == _node(ob)
        assert oa.stride() == ob.stride()
    if name == "detach_copy":
        with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not implemented"):
            ra.sum().backward()
        return
    sum(o.sum() * (k + 1) for k, o in enumerate(outs_a)).backward()
    sum(o.sum() * (k + 1) for k, o in enumerate(outs_b)).backward()
    _same(a.grad, b.grad)


def test_copy_ops_overloads():
    a, b = _pair((1, 3, 1))
    a.requires_grad_(True)
    b.requires_grad_(True)
    for args in ((), (0,), ([0, 2],)):
        ra, rb = tg.squeeze_copy(a, *args), torch.squeeze_copy(b, *args)
        _same(ra, rb)
        assert _node(ra) == _node(rb)
    ra, rb = tg.expand_copy(a, (2, 3, 4)), torch.expand_copy(b, (2, 3, 4))
    _same(ra, rb)
    assert _node(ra) == _node(rb) and ra.stride() == rb.stride()
    ra, rb = tg.view_copy(a, tg.float64), torch.view_copy(b, torch.float64)
    _same(ra, rb)
    assert ra.grad_fn is None and rb.grad_fn is None
    c = np.arange(6.0).reshape(3, 2)
    ra, rb = tg.view_as_complex_copy(tg.tensor(c)), torch.view_as_complex_copy(torch.tensor(c))
    _same(tg.view_as_real_copy(ra), torch.view_as_real_copy(rb))
    with pytest.raises(RuntimeError, match="view_as_complex_copy does not support automatic differentiation"):
        tg.view_as_complex_copy(tg.tensor(c, requires_grad=True))
    za = tg.tensor(c, requires_grad=True)
    assert _node(tg.view_as_real_copy(tg.view_as_complex(za))) == "ViewAsRealBackward0_copy"
    with pytest.raises(RuntimeError, match="values expected sparse tensor layout but got Strided"):
        tg.values_copy(tg.ones(2))


# ---- dtype helpers, queries, runtime settings ---------------------------------------------------------------


def test_dtype_helpers():
    dts = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
           "complex128"]
    for x in dts:
        for y in dts:
            assert str(tg.promote_types(getattr(tg, x), getattr(tg, y))) == str(
                torch.promote_types(getattr(torch, x), getattr(torch, y)))
            assert tg.can_cast(getattr(tg, x), getattr(tg, y)) == torch.can_cast(getattr(torch, x), getattr(torch, y))
    cases = [(([1], "int64"), 1.0), ((1, "float32"), ([1, 2], "int32")), (([1], "int8"), (5, "int64")),
             (([1], "float32"), 2j), ((True, "bool"), 3)]  # (no float16 with complex: no complex32 here)
    for (va, da), other in cases:
        ta, tt = tg.tensor(va, dtype=getattr(tg, da)), torch.tensor(va, dtype=getattr(torch, da))
        if isinstance(other, tuple):
            oa, ot = tg.tensor(other[0], dtype=getattr(tg, other[1])), torch.tensor(other[0],
                                                                                    dtype=getattr(torch, other[1]))
        else:
            oa = ot = other
        assert str(tg.result_type(ta, oa)) == str(torch.result_type(tt, ot))
        assert str(tg.result_type(oa, ta)) == str(torch.result_type(ot, tt))


def test_factories():
    for size, stride in (((2, 3), (1, 2)), ((2, 3), (3, 1)), ((0, 3), (3, 1))):
        ea, eb = tg.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert ea.stride() == eb.stride() and tuple(ea.shape) == tuple(eb.shape) and str(ea.dtype) == str(eb.dtype)
    for s, kw in ((3, {}), (True, {}), (2.5, {"dtype": "int32"}), (1j, {"dtype": "complex64"})):
        ka = {k: getattr(tg, v) for k, v in kw.items()}
        kb = {k: getattr(torch, v) for k, v in kw.items()}
        _same(tg.scalar_tensor(s, **ka), torch.scalar_tensor(s, **kb))
    with pytest.raises(RuntimeError, match="value cannot be converted to type float without overflow"):
        tg.scalar_tensor(1j)


def test_asarray():
    for data in ([1, 2.5], 3, 3.0, [1, 2], [[True, False]]):
        _same(tg.asarray(data), torch.asarray(data))
    n = np.arange(3.0)
    a = tg.asarray(n)
    a[0] = 5
    assert n[0] == 5
    n = np.arange(3.0)
    tg.asarray(n, copy=True)[0] = 5
    assert n[0] == 0
    assert str(tg.asarray(n, dtype=tg.float32).dtype) == "torch.float32"
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor."):
        tg.asarray([1, 2], copy=False)
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        tg.asarray(3, requires_grad=True)
    x = tg.ones(3, requires_grad=True)
    with warnings.catch_warnings():  # (PyTorch's one-time notice that requires_grad now follows the tensor's)
        warnings.simplefilter("ignore")
        assert tg.asarray(x) is x and x.requires_grad
    c = tg.asarray(x, copy=True)
    assert c is not x and _node(c) == "CloneBackward0"
    assert _node(tg.asarray(x, dtype=tg.float64)) == "ToCopyBackward0"
    assert tg.asarray(x, dtype=tg.float64, requires_grad=False).grad_fn is None
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype 'Double'."):
        tg.asarray(x, dtype=tg.float64, copy=False)
    d = tg.asarray(x, requires_grad=False)
    assert d is not x and not d.requires_grad
    z = tg.ones(3)
    assert tg.asarray(z, requires_grad=True) is z and z.requires_grad


def test_queries():
    x, xt = tg.zeros(2), torch.zeros(2)
    for name in ("is_inference", "is_conj", "is_neg", "get_device"):
        assert getattr(tg, name)(x) == getattr(torch, name)(xt)
        with pytest.raises(TypeError, match=f"{name}\\(\\): argument 'input' \\(position 1\\) must be Tensor, not int"):
            getattr(tg, name)(3)
    assert tg.typename(x) == torch.typename(xt) == "torch.FloatTensor"
    assert tg.typename(tg.zeros(2, dtype=tg.int64)) == "torch.LongTensor"
    assert tg.typename(3) == torch.typename(3) and tg.typename(np.zeros(1)) == torch.typename(np.zeros(1))


def test_runtime_settings():
    n = tg.get_num_threads()
    assert n >= 1 and tg.get_num_interop_threads() >= 1 and tg.init_num_threads() is None
    tg.set_num_threads(3)
    assert tg.get_num_threads() == 3
    tg.set_num_threads(n)
    for bad, msg in ((0, "set_num_threads expects a positive integer"),
                     ("a", "set_num_threads expects an int, but got str")):
        with pytest.raises(RuntimeError, match=msg):
            tg.set_num_threads(bad)
    assert str(tg.get_default_device()) == "cpu"
    tg.set_default_device("cpu")
    tg.set_default_device(None)
    assert str(tg.get_default_device()) == "cpu"
    if not tg.cuda.is_available():  # (as torch: accepted, then refused by the next factory)
        tg.set_default_device("cuda")
        try:
            with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
                tg.zeros(1)
        finally:
            tg.set_default_device(None)
    try:
        assert tg.get_deterministic_debug_mode() == 0 and not tg.are_deterministic_algorithms_enabled()
        for mode, expect in (("warn", (1, True, True)), ("error", (2, True, False)), (0, (0, False, False))):
            tg.set_deterministic_debug_mode(mode)
            assert (tg.get_deterministic_debug_mode(), tg.are_deterministic_algorithms_enabled(),
                    tg.is_deterministic_algorithms_warn_only_enabled()) == expect
        with pytest.raises(RuntimeError, match="invalid value of debug_mode, expected 0, 1, or 2, but got 3"):
            tg.set_deterministic_debug_mode(3)
        with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got x"):
            tg.set_deterministic_debug_mode("x")
        with pytest.raises(TypeError, match="argument 'mode' \\(position 1\\) must be bool, not str"):
            tg.use_deterministic_algorithms("x")
        tg.use_deterministic_algorithms(True, warn_only=True)
        assert tg.get_deterministic_debug_mode() == 1
    finally:
        tg.use_deterministic_algorithms(False)
    assert tg.get_float32_matmul_precision() == "highest"
    with precisions_kept(tg):  # (setting "highest" back would leave the new API's nodes at "ieee", not "none")
        tg.set_float32_matmul_precision("high")
        assert tg.get_float32_matmul_precision() == "high"
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            tg.set_float32_matmul_precision("x")
        assert tg.get_float32_matmul_precision() == "high"
    assert isinstance(tg.set_flush_denormal(False), bool)


# ---- nn functions at the top level --------------------------------------------------------------------------


def _nn_cases():
    r = np.random.default_rng(3)
    x = r.standard_normal((2, 3, 8))
    y = r.standard_normal((2, 3, 8))
    sign = np.sign(r.standard_normal((2, 3, 8)))
    img = r.standard_normal((2, 3, 6, 6))
    vol = r.standard_normal((1, 2, 4, 4, 4))
    prob = r.uniform(0.1, 0.9, (2, 3, 8))
    vec = r.standard_normal((4, 5))
    t1 = np.sign(r.standard_normal(4))
    return [
        ("kl_div", (x, prob), {}), ("kl_div", (x, prob, 1), {}), ("kl_div", (x, prob, 2), {}), ("kl_div", (x, y, 0), {"log_target": True}),
        ("binary_cross_entropy_with_logits", (x, prob), {}),
        ("binary_cross_entropy_with_logits", (x, prob, None, np.full(8, 2.0), 2), {}),
        ("cosine_embedding_loss", (vec, vec[::-1].copy(), t1, 0.1, 0), {}),
        ("hinge_embedding_loss", (x, sign, 0.5, 2), {}),
        ("margin_ranking_loss", (x, y, sign, 0.2), {}), ("margin_ranking_loss", (x, y, sign, 0.2, 1), {}),
        ("poisson_nll_loss", (x, prob, True, False, 1e-8, 1), {}),
        ("poisson_nll_loss", (np.abs(x), prob, False, True, 1e-8, 0), {}),
        ("triplet_margin_loss", (vec, vec * 0.5, vec[::-1].copy(), 1.0, 2.0, 1e-6, True, 2), {}),
        ("max_pool1d", (x, 3), {}), ("max_pool1d", (x, 3, 2, 1, 1, True), {}),
        ("max_pool1d_with_indices", (x, 2), {}), ("max_pool2d", (img, 2), {}), ("max_pool2d", (img, 3, [], 1), {}),
        ("max_pool3d", (vol, 2), {}), ("avg_pool1d", (x, 3, 2, 1, False, False), {}),
        ("adaptive_avg_pool1d", (x, 3), {}), ("adaptive_max_pool1d", (x, 3), {}),
        ("prelu", (img, np.array([0.1, 0.2, 0.3])), {}), ("hardshrink", (x, 0.4), {}),
        ("rms_norm", (x, (8,), np.linspace(0.5, 1.5, 8)), {}),
        ("convolution", (img, r.standard_normal((4, 3, 3, 3)), np.zeros(4), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
         {}),
    ]


@pytest.mark.parametrize("name,args,kwargs", _nn_cases(), ids=lambda v: v if isinstance(v, str) else "")
def test_nn_at_top_level(name, args, kwargs):
    def conv(lib, v, first):
        if isinstance(v, np.ndarray):
            t = lib.tensor(v)
            return t.requires_grad_(True) if first and v.dtype == np.float64 else t
        return v

    ta = [conv(tg, v, k == 0) for k, v in enumerate(args)]
    tb = [conv(torch, v, k == 0) for k, v in enumerate(args)]
    ra, rb = getattr(tg, name)(*ta, **kwargs), getattr(torch, name)(*tb, **kwargs)
    _same(ra, rb)
    oa = ra[0] if isinstance(ra, tuple) else ra
    ob = rb[0] if isinstance(rb, tuple) else rb
    assert _node(oa) == _node(ob)
    oa.sum().backward()
    ob.sum().backward()
    _same(ta[0].grad, tb[0].grad)
