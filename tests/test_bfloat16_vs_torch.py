"""torch.bfloat16 against torch 2.13's CPU build: the dtype, conversions, factories, promotion, printing, the operators
(computed in float and rounded once), autograd, modules, optimizers and torch.save/load, bit for bit where tracegrad
matches; the approximate ones (layer norm's weight gradient, Adam's steps) within a few bfloat16 ulps."""

from __future__ import annotations

import io

import pytest
from _lib import np, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _bits(t) -> tuple:
    """A tensor as (dtype name, shape, raw bits): bfloat16 seen as int16, so NaN payloads and signed zeros count."""
    t = t.detach()
    lib = torch if isinstance(t, torch.Tensor) else tg
    raw = t.view(lib.int16) if t.dtype is lib.bfloat16 else t
    return str(t.dtype), tuple(t.shape), raw.numpy().tobytes()


def _both(program, seed: int = 0) -> list:
    """``program(lib)`` for torch and tracegrad from the same seed; tensors as raw bits, everything else as it is."""
    out = []
    for lib in (torch, tg):
        lib.manual_seed(seed)
        value = program(lib)
        values = value if isinstance(value, (list, tuple)) else [value]
        out.append([_bits(v) if hasattr(v, "detach") else str(v) if "dtype" in type(v).__name__ else v
                    for v in values])
    return out


def _same(program, seed: int = 0) -> None:
    theirs, ours = _both(program, seed)
    assert ours == theirs


def _rand(lib, *shape):
    return lib.randn(*shape).bfloat16()


def test_dtype_object_and_finfo():
    _same(lambda lib: [lib.bfloat16, lib.bfloat16.is_floating_point, lib.bfloat16.itemsize, lib.bfloat16.is_signed,
                       lib.bfloat16.to_complex(), lib.bfloat16.to_real(), repr(lib.finfo(lib.bfloat16)),
                       lib.finfo(lib.bfloat16).bits, lib.finfo(lib.bfloat16).eps, lib.finfo(lib.bfloat16).max,
                       lib.finfo(lib.bfloat16).tiny, lib.finfo(lib.bfloat16).resolution,
                       lib.cuda.is_bf16_supported(), lib.tensor([1.0], dtype=lib.bfloat16).type(),
                       lib.tensor([1.0], dtype=lib.bfloat16).element_size()])


@pytest.mark.parametrize("other", ["float16", "float32", "float64", "complex64", "int64", "bool"])
def test_promotion(other):
    _same(lambda lib: [lib.promote_types(lib.bfloat16, getattr(lib, other)),
                       (_rand(lib, 3) + lib.ones(3, dtype=getattr(lib, other))).dtype,
                       (_rand(lib, 3) + lib.ones((), dtype=getattr(lib, other))).dtype,
                       (_rand(lib, 3) + 1.5).dtype, (lib.arange(3) + _rand(lib, 3)).dtype])


def test_conversions_round_to_nearest_even():
    values = [1.00390625 + 2.0 ** -30, 1.01171875, -2.7, 1e-40, 3.4e38, float("inf"), 0.1, -0.0]
    _same(lambda lib: [lib.tensor(values, dtype=lib.float64).bfloat16(), lib.tensor(values, dtype=lib.bfloat16),
                       lib.tensor(values).to(lib.bfloat16), lib.tensor([1.5, -2.7, 300.0], dtype=lib.bfloat16).int(),
                       _rand(lib, 5).float(), _rand(lib, 5).double(), lib.tensor(values[:3], dtype=lib.bfloat16).tolist(),
                       lib.tensor([0.1], dtype=lib.bfloat16).item()])


def test_factories():
    _same(lambda lib: [lib.zeros(3, dtype=lib.bfloat16), lib.full((3,), 1.3, dtype=lib.bfloat16),
                       lib.arange(0, 3, 0.7, dtype=lib.bfloat16), lib.arange(-1.3, 50, 0.37, dtype=lib.bfloat16),
                       lib.arange(0, 5000, 3.1, dtype=lib.bfloat16), lib.linspace(-3, 10, 40, dtype=lib.bfloat16),
                       lib.linspace(0.1, 7.3, 100, dtype=lib.bfloat16), lib.rand(40, dtype=lib.bfloat16),
                       lib.randn(5, dtype=lib.bfloat16), lib.ones(2, 2).bfloat16()])


def test_default_dtype_bfloat16():
    def program(lib):
        lib.set_default_dtype(lib.bfloat16)
        try:
            return [lib.get_default_dtype(), lib.tensor([1.5]), lib.zeros(2)]
        finally:
            lib.set_default_dtype(lib.float32)

    _same(program)


def test_printing():
    _same(lambda lib: [repr(lib.tensor([1.0, 2.0], dtype=lib.bfloat16)), repr(_rand(lib, 3, 3)),
                       str(lib.tensor([1.2345678e-5, 3e6], dtype=lib.bfloat16))])


_POINTWISE = {
    "mul": lambda lib, a, b: a * b, "add": lambda lib, a, b: a + b, "div": lambda lib, a, b: a / b,
    "mul_number": lambda lib, a, b: a * 0.1, "div_number": lambda lib, a, b: a / 0.3,
    "sin": lambda lib, a, b: lib.sin(a), "exp": lambda lib, a, b: lib.exp(a), "tanh": lambda lib, a, b: lib.tanh(a),
    "sigmoid": lambda lib, a, b: lib.sigmoid(a), "sqrt": lambda lib, a, b: lib.sqrt(a.abs()),
    "square": lambda lib, a, b: a ** 2, "relu": lambda lib, a, b: lib.relu(a), "gt": lambda lib, a, b: a > b,
    "where": lambda lib, a, b: lib.where(a > 0, a, b), "max": lambda lib, a, b: lib.maximum(a, b),
    "in_place": lambda lib, a, b: a.mul_(b), "in_place_view": lambda lib, a, b: (a[2:5].mul_(3), a)[1],
    "mixed_float32": lambda lib, a, b: a + b.float(), "gelu": lambda lib, a, b: lib.nn.functional.gelu(a),
    "silu": lambda lib, a, b: lib.nn.functional.silu(a), "mse": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
}


@pytest.mark.parametrize("name", list(_POINTWISE))
def test_pointwise_in_float_rounded_once(name):
    _same(lambda lib: _POINTWISE[name](lib, _rand(lib, 40), _rand(lib, 40)))


_REDUCTIONS = {
    "sum": lambda t: t.sum(), "sum_dim": lambda t: t.sum(1), "mean": lambda t: t.mean(), "mean_0": lambda t: t.mean(0),
    "cumsum": lambda t: t.cumsum(1), "var": lambda t: t.var(), "std": lambda t: t.std(1),
    "argmax": lambda t: t.argmax(), "softmax": lambda t: t.softmax(1),
}


@pytest.mark.parametrize("name", list(_REDUCTIONS))
def test_reductions_accumulate_in_float(name):
    _same(lambda lib: _REDUCTIONS[name](_rand(lib, 5, 30)))


@pytest.mark.parametrize("shapes", [((8, 16), (16, 8)), ((32, 64), (64, 32)), ((2, 8, 16), (2, 16, 8))])
def test_matrix_products_in_float(shapes):
    _same(lambda lib: _rand(lib, *shapes[0]) @ _rand(lib, *shapes[1]))


def test_autograd_grads_are_bfloat16():
    def program(lib):
        x = _rand(lib, 4, 6).requires_grad_()
        w = _rand(lib, 6, 3).requires_grad_()
        y = (x @ w).sin().sum()
        y.backward()
        (x * x).sum().backward()  # (accumulated into the first gradient)
        return [y, x.grad, w.grad, y.grad_fn.name()]

    _same(program)


def test_modules():
    results = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        linear, conv = lib.nn.Linear(8, 4).bfloat16(), lib.nn.Conv2d(2, 3, 3).to(lib.bfloat16)
        x, image = _rand(lib, 3, 8).requires_grad_(), _rand(lib, 1, 2, 6, 6)
        scores, features = linear(x), conv(image)
        loss = lib.nn.functional.cross_entropy(scores, lib.tensor([1, 0, 3])) + features.sum()
        loss.backward()
        results.append([scores, features, x.grad, linear.weight.grad, linear.bias.grad, conv.weight.grad])
    theirs, ours = results
    assert [_bits(t) for t in ours[:2]] == [_bits(t) for t in theirs[:2]]
    assert all(str(a.dtype) == "torch.bfloat16" for a in ours[2:])


def _ulps(ours, theirs) -> int:
    a = ours.detach().view(tg.int16).numpy().astype(np.int32)
    b = theirs.detach().view(torch.int16).numpy().astype(np.int32)
    return int(np.abs(a - b).max())


def test_layer_norm_exact_but_weight_gradient_approximate():
    results = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        norm = lib.nn.LayerNorm(16).bfloat16()
        x = _rand(lib, 4, 16).requires_grad_()
        out = norm(x)
        out.pow(2).sum().backward()
        results.append((out, x.grad, norm.weight.grad))
    (t_out, t_gx, t_gw), (out, gx, gw) = results
    assert _bits(out)[2] == _bits(t_out)[2] and _bits(gx)[2] == _bits(t_gx)[2]
    assert _ulps(gw, t_gw) <= 2  # (torch sums the rows in its own order)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_optimizers_on_bfloat16_parameters(optimizer):
    results = []
    for lib in (torch, tg):
        lib.manual_seed(0)
        model = lib.nn.Linear(8, 4).bfloat16()
        opt = getattr(lib.optim, optimizer)(model.parameters(), lr=0.01, **({"momentum": 0.9} if optimizer == "SGD"
                                                                            else {}))
        for _ in range(3):
            opt.zero_grad()
            model(_rand(lib, 3, 8)).pow(2).mean().backward()
            opt.step()
        results.append(model.weight)
    assert str(results[1].dtype) == "torch.bfloat16"
    assert _ulps(results[1], results[0]) <= 4


@pytest.mark.parametrize("legacy", [False, True])
def test_save_and_load_both_ways(legacy):
    options = {"_use_new_zipfile_serialization": False} if legacy else {}
    torch.manual_seed(0)
    x = torch.randn(5).bfloat16()
    buffer = io.BytesIO()
    torch.save({"x": x, "part": x[1:3]}, buffer, **options)
    loaded = tg.load(io.BytesIO(buffer.getvalue()))
    assert _bits(loaded["part"]) == _bits(x[1:3])
    buffer = io.BytesIO()
    tg.save({"x": loaded["x"]}, buffer)
    assert _bits(torch.load(io.BytesIO(buffer.getvalue()))["x"]) == _bits(x)


def test_storage_cast():
    _same(lambda lib: [lib.tensor([1.5390625, -0.29296875, 0.1]).untyped_storage().bfloat16().dtype,
                       list(lib.tensor([1.5390625, -0.29296875, 0.1]).storage().bfloat16())])


def test_autocast_default_dtype_is_bfloat16_and_enabling_casts():
    assert tg.get_autocast_dtype("cpu") is tg.bfloat16 and torch.get_autocast_dtype("cpu") is torch.bfloat16
    with tg.autocast("cpu", dtype=tg.bfloat16):  # (tests/amp/test_cpu_autocast_vs_torch.py checks the casts)
        assert tg.mm(tg.ones(2, 2), tg.ones(2, 2)).dtype is tg.bfloat16
