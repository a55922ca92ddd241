"""New results are laid out as PyTorch lays them out: the same ``stride()``, so the same ``is_contiguous()``, the
same ``view`` refusals, and the same backward branches where a formula reads a layout.

- Pointwise results follow TensorIterator's rule (_strides.py), checked on random layouts: random
  permutations, gaps, dims of size 1 with any stride, broadcasting, empty tensors and Python numbers, both for the
  rule itself and end to end through the operators (fast paths and general path), forward and backward.
- Every operator of the OpInfo database gives its results the strides torch gives them.
- The other families: reductions and scans (contiguous), ``clone``/``.to()``/``*_like`` (``preserve_format``,
  with random values filled in memory order), channels-last propagation, ``unsqueeze`` and ``rot90``.
"""

from __future__ import annotations

import random
import zlib

import opinfo.core as opinfo_core
import pytest
from _lib import np, tg, torch
from opinfo import op_db
from opinfo.core import Call, flatten_outputs, resolve

from tracegrad._strides import torch_strides

# ------------------------------------------------------------------------------------------------ random layouts


def _random_strides(rnd: random.Random, shape: tuple) -> list:
    """Dense strides in a random dim order, some dims stepping over gaps, and dims of size 1 with any stride."""
    order = list(range(len(shape)))
    if rnd.random() < 0.6:
        rnd.shuffle(order)
    strides = [0] * len(shape)
    step = 1
    for d in reversed(order):
        gap = rnd.choice((1, 1, 1, 2))
        strides[d] = step * gap
        step *= max(shape[d], 1) * gap
    for d, n in enumerate(shape):
        if n == 1 and rnd.random() < 0.5:
            strides[d] = rnd.choice((1, 2, 3, 7, 12))
    return strides


def _random_shape(rnd: random.Random, empty: bool = False) -> tuple:
    """2 to 4 dims of sizes 1 to 4; with ``empty``, sometimes a dim of size 0."""
    ndim = rnd.choice((2, 2, 3, 3, 4))
    return tuple(rnd.choice((0, 1, 2, 3)) if empty and rnd.random() < 0.08 else rnd.choice((1, 2, 3, 4))
                 for _ in range(ndim))


def _broadcast_to(rnd: random.Random, shape: tuple) -> tuple:
    """A shape that broadcasts to ``shape``: some dims 1, maybe fewer leading dims."""
    own = [1 if rnd.random() < 0.3 else n for n in shape]
    return tuple(own[rnd.randint(0, len(own)):] if rnd.random() < 0.3 else own)


def _pair(rnd: random.Random, shape: tuple, dtype=np.float64):
    """The same strided tensor in NumPy, tracegrad and torch: a view with random strides of a fresh buffer."""
    strides = _random_strides(rnd, shape)
    extent = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 1
    values = (np.arange(extent) % 7 - 3).astype(dtype)
    array = np.lib.stride_tricks.as_strided(values, shape, [s * values.itemsize for s in strides])
    ours = tg.as_strided(tg.tensor(values), shape, strides)
    theirs = torch.as_strided(torch.tensor(values), shape, strides)
    return array, ours, theirs


def _operands(rnd: random.Random, count: int, numbers: bool = True, empty: bool = False):
    """``count`` operands for one pointwise call: the first of the result's shape, the others of it or of a shape
    that broadcasts to it, or (with ``numbers``) a Python number."""
    shape = _random_shape(rnd, empty)
    out = []
    for i in range(count):
        if i and numbers and rnd.random() < 0.2:
            out.append((2.0, 2.0, 2.0))
        else:
            out.append(_pair(rnd, shape if i == 0 or rnd.random() < 0.5 else _broadcast_to(rnd, shape)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_tensor_iterator_rule_is_torchs(seed):
    """``torch_strides`` (the rule, on NumPy arrays) gives the strides torch's result has."""
    rnd = random.Random(seed)
    for _ in range(800):
        count = rnd.choice((1, 2, 2, 3))
        ops = _operands(rnd, count, numbers=count == 2, empty=True)
        theirs = [t for _, _, t in ops]
        try:
            result = (torch.exp(theirs[0]) if count == 1 else torch.add(*theirs) if count == 2
                      else torch.addcmul(*theirs))
        except RuntimeError:  # shapes that do not broadcast
            continue
        assert torch_strides(tuple(result.shape), [a for a, _, _ in ops]) == result.stride(), [
            (getattr(a, "shape", a), getattr(t, "stride", lambda: None)()) for a, _, t in ops]


# Public pointwise calls, each with how many operands it takes; they cover the unary and binary fast paths, the
# general path (``where``, ``addcmul``, comparisons), number operands, ``rsub``, ``pow``'s two overloads and dtype
# promotion (an integer operand is cast first).
POINTWISE_CALLS = {
    "exp": (1, lambda lib, x: x.exp()),
    "neg": (1, lambda lib, x: -x),
    "sigmoid": (1, lambda lib, x: lib.sigmoid(x)),
    "relu": (1, lambda lib, x: lib.relu(x)),
    "pow_scalar": (1, lambda lib, x: x ** 2),
    "mul_number": (1, lambda lib, x: x * 3.0),
    "rsub_number": (1, lambda lib, x: 2.0 - x),
    "add_int_number": (1, lambda lib, x: x.long() + 1),
    "int_true_divide": (1, lambda lib, x: x.long() / 2),
    "mul": (2, lambda lib, x, y: x * y),
    "add_alpha": (2, lambda lib, x, y: lib.add(x, y, alpha=2)),
    "rsub": (2, lambda lib, x, y: lib.rsub(x, y)),
    "pow": (2, lambda lib, x, y: x.abs() ** y),
    "maximum": (2, lambda lib, x, y: lib.maximum(x, y)),
    "lt": (2, lambda lib, x, y: x < y),
    "mixed_dtypes": (2, lambda lib, x, y: x.int() + y),
    "where": (3, lambda lib, x, y, z: lib.where(x > 0, y, z)),
    "addcmul": (3, lambda lib, x, y, z: lib.addcmul(x, y, z, value=0.5)),
    "lerp": (3, lambda lib, x, y, z: lib.lerp(x, y, z)),
}


@pytest.mark.parametrize("name", POINTWISE_CALLS)
def test_pointwise_results_laid_out_as_torch(name):
    """Through the operators, on random layouts (not empty ones: a view NumPy makes of an empty array has zero
    strides, so tracegrad cannot hold an empty operand's strides; its results read as contiguous)."""
    count, call = POINTWISE_CALLS[name]
    rnd = random.Random(name)
    for _ in range(150):
        ops = _operands(rnd, count, numbers=False)
        try:
            theirs = call(torch, *[t for _, _, t in ops])
        except RuntimeError:
            continue
        ours = call(tg, *[g for _, g, _ in ops])
        assert ours.stride() == theirs.stride(), (name, [(tuple(t.shape), t.stride()) for _, _, t in ops])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12, atol=0)


GRADIENT_CALLS = {
    "mul": lambda lib, x, y: x * y,
    "add_exp": lambda lib, x, y: (x + y).exp(),
    "div": lambda lib, x, y: x / (y.abs() + 1),
    "where": lambda lib, x, y: lib.where(x > 0, x, y * 2),
    "tanh_sub": lambda lib, x, y: lib.tanh(x) - y,
}


@pytest.mark.parametrize("name", GRADIENT_CALLS)
def test_gradients_laid_out_as_torch(name):
    """The gradients a backward formula computes (seen by tensor hooks on non-leaf views) have torch's strides."""
    rnd = random.Random(name)
    for _ in range(60):
        shape = tuple(rnd.choice((1, 2, 3)) for _ in range(rnd.choice((2, 3))))
        layouts = []
        for k in range(2):
            own = shape if k == 0 or rnd.random() < 0.6 else _broadcast_to(rnd, shape)
            layouts.append((own, _random_strides(rnd, own)))
        seen = {}
        for lib in (tg, torch):
            strides: list = []
            inputs = []
            for own, own_strides in layouts:
                extent = 1 + sum((n - 1) * st for n, st in zip(own, own_strides))
                base = lib.tensor(np.linspace(-1.0, 1.0, extent), requires_grad=True)
                view = lib.as_strided(base, own, own_strides)
                view.register_hook(lambda g, strides=strides: strides.append(tuple(g.stride())))
                inputs.append(view)
            out = GRADIENT_CALLS[name](lib, *inputs)
            out.backward(lib.ones_like(out))
            seen[lib] = strides
        assert seen[tg] == seen[torch], (name, layouts)


# ------------------------------------------------------------------------------------------------ every operator

# Operators whose results still have other strides than torch's, with why.
KNOWN_DIFFERENT: dict[str, str] = {}
ONE_DTYPE = {}
for _op in op_db:
    ONE_DTYPE.setdefault(_op.id, _op)
OPS = [pytest.param(op, id=op.id, marks=pytest.mark.xfail(strict=True, reason=KNOWN_DIFFERENT[op.id])
                    if op.id in KNOWN_DIFFERENT else ()) for op in ONE_DTYPE.values()]


@pytest.mark.parametrize("op", OPS)
def test_operator_results_laid_out_as_torch(op):
    """Each sample's results (contiguous, transposed and strided inputs) have torch's strides."""
    dtype = "float64" if "float64" in op.dtypes else op.dtypes[0]
    for sample in op.samples(dtype):
        try:
            theirs = Call(torch, op, sample, requires_grad=False).run(resolve(torch, op.name))
        except Exception:  # (the forward tests compare the errors)
            continue
        ours = Call(tg, op, sample, requires_grad=False).run(resolve(tg, op.name))
        for k, (a, b) in enumerate(zip(flatten_outputs(ours), flatten_outputs(theirs))):
            if tuple(a.shape) == tuple(b.shape):
                assert a.stride() == b.stride(), f"{sample.name}: output {k}"


def _randomly_laid_out(lib, arr):
    """``opinfo.core.make_tensor`` with a random layout instead of the sample's (the same in both libraries: the
    layout is drawn from the values): a permutation (channels-last for 4 dims), gaps, size-1 dims' strides."""
    values = arr.values
    if values.ndim == 0 or values.size == 0:
        return lib.tensor(values)
    rnd = random.Random(zlib.crc32(values.tobytes()) ^ zlib.crc32(str(values.shape).encode()))
    strides = _random_strides(rnd, values.shape)
    if values.ndim == 4 and rnd.random() < 0.3:
        strides = _channels_last_strides(values.shape)
    extent = 1 + sum((n - 1) * s for n, s in zip(values.shape, strides))
    buffer = np.zeros(extent, values.dtype)
    np.lib.stride_tricks.as_strided(buffer, values.shape, [s * values.itemsize for s in strides])[...] = values
    return lib.as_strided(lib.tensor(buffer), values.shape, strides)


def _channels_last_strides(shape: tuple) -> list:
    n, c, h, w = shape
    return [h * w * c, 1, w * c, c]


@pytest.mark.parametrize("op", OPS)
def test_operator_results_laid_out_as_torch_on_random_layouts(op, monkeypatch):
    """The same on inputs with random layouts (as test_tensor_iterator_rule_is_torchs draws them)."""
    monkeypatch.setattr(opinfo_core, "make_tensor", _randomly_laid_out)
    test_operator_results_laid_out_as_torch(op)


# Backward formulas whose gradients still have other strides than torch's (values and graphs agree)
KNOWN_GRADIENT_LAYOUTS: dict[str, str] = {
    "nn.grad.conv2d_input": "ConvolutionBackwardBackward0's weight gradient is contiguous; torch's, a convolution "
                            "of swapped operands, has its first two dimensions transposed",
}
GRAD_OPS = [pytest.param(op, id=op.id, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GRADIENT_LAYOUTS[op.id])
                         if op.id in KNOWN_GRADIENT_LAYOUTS else ())
            for op in ONE_DTYPE.values() if op.differentiable and "float64" in op.dtypes]


def _gradient_strides(lib, op, sample):
    call = Call(lib, op, sample, requires_grad=True)
    outputs = [o for o in flatten_outputs(call.run(resolve(lib, op.name))) if o.requires_grad]
    inputs = [call.tensors[i] for i in call.diff]
    if not outputs or not inputs:
        return None
    grads = lib.autograd.grad(outputs, inputs, [lib.ones_like(o) for o in outputs], allow_unused=True)
    return [None if g is None else (tuple(g.shape), g.stride()) for g in grads]


@pytest.mark.parametrize("op", GRAD_OPS)
def test_gradients_of_every_operator_laid_out_as_torch(op, monkeypatch):
    """``autograd.grad``'s results (what backward formulas return, before AccumulateGrad's layout contract), on
    the database's samples and on inputs laid out at random."""
    for make in (opinfo_core.make_tensor, _randomly_laid_out):
        monkeypatch.setattr(opinfo_core, "make_tensor", make)
        for sample in op.samples("float64"):
            try:
                theirs = _gradient_strides(torch, op, sample)
            except Exception:  # (the gradient tests compare errors)
                continue
            assert _gradient_strides(tg, op, sample) == theirs, sample.name


# ------------------------------------------------------------------------------------------------ the families


def _strides_of(lib, program) -> list:
    return [tuple(t.stride()) for t in program(lib)]


def _same_strides(program) -> None:
    assert _strides_of(tg, program) == _strides_of(torch, program)


def test_each_operator_follows_one_rule():
    from tracegrad.ops import result_layouts as rules

    tables = [rules.TENSOR_ITERATOR_OPS, rules.CONTIGUOUS_RESULTS, rules.SELF_LAYOUT_RESULTS, rules.SCATTER_RESULTS,
              rules.SUGGESTED_LAYOUT_RESULTS, rules.INPUT_SUGGESTED_RESULTS, rules.CONVOLUTIONS]
    names = [name for table in tables for name in table]
    assert len(names) == len(set(names)), sorted(n for n in set(names) if names.count(n) > 1)


def test_mixed_layouts_follow_the_first_operand():
    """``a.t() + b`` is laid out as ``a.t()``: not contiguous, so ``view`` refuses it, in both libraries."""
    for lib in (tg, torch):
        a = lib.arange(12.0).reshape(4, 3).t()
        b = lib.zeros(3, 4)
        assert (a + b).stride() == (1, 3) and (b + a).stride() == (4, 1)
        assert not (a + b).is_contiguous()
        with pytest.raises(RuntimeError, match="view size is not compatible with input tensor's size and stride"):
            (a + b).view(-1)


def test_reductions_and_scans_are_contiguous():
    def program(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
        return [x.sum(1, keepdim=True), x.mean((0, 2), keepdim=True), x.amax(2), x.cumsum(0), x.var(1),
                x.logsumexp(0, keepdim=True), x.max(1, keepdim=True).values, x.argmax(2, keepdim=True),
                x.norm(dim=1, keepdim=True), x.cummax(2).indices, lib.nn.functional.layer_norm(x, (3,)),
                lib.nn.functional.pad(x, (1, 1)), x.masked_fill(x > 3, 0.0)]
    _same_strides(program)


def test_preserve_format_copies():
    """``clone``, ``.to()`` and the ``*_like`` factories keep a dense tensor's strides, size-1 dims included, and
    a tensor with gaps the order of its strides (``empty_like``'s rule)."""
    def program(lib):
        base = lib.arange(48.0).reshape(4, 12)
        out = []
        for x in (base.t(), base[:, ::2].t(), base[:1].t(), lib.arange(3.0).expand(4, 3),
                  lib.arange(24.0).reshape(2, 3, 4).permute(1, 2, 0)[:, ::2]):
            out += [x.clone(), x.double(), x.to(lib.int32), lib.empty_like(x), lib.zeros_like(x), lib.ones_like(x),
                    lib.full_like(x, 2.0), x.flip(0), lib.zeros_like(x, memory_format=lib.contiguous_format)]
        image = lib.zeros(2, 3, 4, 5)
        out += [lib.empty_like(image, memory_format=lib.channels_last), lib.ones_like(image.permute(0, 2, 3, 1)),
                image.clone(memory_format=lib.channels_last)]
        return out
    _same_strides(program)


def test_to_memory_format():
    """``.to(memory_format=...)`` and the casts' ``memory_format``: the tensor itself where it already suggests
    that format (and has the dtype), else a copy in it (ToCopyBackward0); ``copy=True`` copies anyway."""
    seen = []
    for lib in (tg, torch):
        x = lib.randn(2, 3, 4, 5, requires_grad=True)
        last = x.to(memory_format=lib.channels_last)
        results = [last, x.to(lib.float64, memory_format=lib.channels_last), last.to(memory_format=lib.contiguous_format),
                   x.to(copy=True, memory_format=lib.channels_last), lib.randn(1, 2, 3, 4, 5).to(
                       memory_format=lib.channels_last_3d)]
        results += [x.double(memory_format=lib.channels_last), x.float(memory_format=lib.channels_last),
                    x.half(memory_format=lib.preserve_format)]
        aliases = (last.to(memory_format=lib.channels_last) is last, x.to(memory_format=lib.contiguous_format) is x,
                   last.to(memory_format=lib.preserve_format) is last, x.float() is x)
        seen.append(([(t.stride(), str(t.dtype), t.grad_fn.name() if t.grad_fn else None) for t in results], aliases))
    assert seen[0] == seen[1]


def test_empty_with_a_memory_format():
    """``torch.empty(..., memory_format=...)``: channels-last strides for its rank, torch's refusals otherwise."""
    seen = []
    for lib in (tg, torch):
        outcomes = []
        for fmt in (lib.preserve_format, lib.channels_last, lib.channels_last_3d, lib.contiguous_format):
            for shape in ((2, 3, 4, 5), (2, 3, 4, 5, 6), (2, 3)):
                try:
                    outcomes.append(lib.empty(*shape, memory_format=fmt).stride())
                except RuntimeError as exc:
                    outcomes.append(str(exc))
        seen.append(outcomes)
    assert seen[0] == seen[1]


def test_random_like_factories_fill_memory_in_order():
    """``rand_like`` of a transposed tensor is transposed, and its values are the stream's in memory order."""
    for make in ("rand_like", "randn_like"):
        results = []
        for lib in (tg, torch):
            lib.manual_seed(0)
            results.append(getattr(lib, make)(lib.zeros(4, 3).t()))
        assert results[0].stride() == results[1].stride() == (1, 3)
        np.testing.assert_array_equal(results[0].numpy(), results[1].numpy())
    for lib in (tg, torch):
        lib.manual_seed(1)
    ours, theirs = (lib.randint_like(lib.zeros(4, 3).t(), 10) for lib in (tg, torch))
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@pytest.mark.parametrize("layout", ["transposed", "channels_last", "sliced"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_randn_like_of_16_or_more_laid_out_otherwise_draws_one_normal_at_a_time(layout, dtype):
    """normal_'s 16-at-a-time fill needs a contiguous tensor: a ``randn_like`` result laid out otherwise draws
    scalar normals in memory order, and the generator is left where torch's is."""
    seen = []
    for lib in (tg, torch):
        zeros = lib.zeros(2, 3, 4, 5, dtype=getattr(lib, dtype))
        like, fmt = {"transposed": (zeros.reshape(6, 20).t(), lib.preserve_format),
                     "channels_last": (zeros, lib.channels_last),
                     "sliced": (zeros.reshape(3, 40)[:, ::2], lib.preserve_format)}[layout]
        lib.manual_seed(0)
        drawn = lib.randn_like(like, memory_format=fmt)
        seen.append((drawn.stride(), drawn.reshape(-1).tolist(), lib.randn(3).tolist()))
    assert seen[0] == seen[1]


def test_channels_last_propagates():
    def program(lib):
        F = lib.nn.functional
        lib.manual_seed(0)
        x = lib.randn(2, 3, 6, 6).contiguous(memory_format=lib.channels_last)
        w = lib.randn(4, 3, 3, 3)
        return [F.conv2d(x, w), F.conv2d(x.contiguous(), w.contiguous(memory_format=lib.channels_last)),
                F.conv_transpose2d(x, lib.randn(3, 2, 3, 3)), F.max_pool2d(x, 2), F.avg_pool2d(x, 2),
                F.adaptive_avg_pool2d(x, 2), F.adaptive_max_pool2d(x, 2), F.interpolate(x, scale_factor=2),
                F.interpolate(x, scale_factor=2, mode="bilinear"), F.interpolate(x, size=(3, 7), mode="nearest-exact"),
                F.pad(x, (1, 1)), F.pad(x, (1, 1, 1, 1), mode="reflect"), F.pad(x, (1, 1, 1, 1), mode="replicate"),
                F.relu(x), x.softmax(1), x.roll(1, 2), x.tril(), lib.cat([x, x], 1), F.instance_norm(x),
                F.batch_norm(x, lib.zeros(3), lib.ones(3)), F.group_norm(x, 3),
                F.pixel_shuffle(lib.randn(1, 4, 2, 2).contiguous(memory_format=lib.channels_last), 2)]
    _same_strides(program)


def test_channels_last_gradients():
    """The gradients of a convolution block on a channels-last batch, as ``retain_grad`` and ``.grad`` see them,
    and a convolution's raw input gradient (its layout comes from the input, which the gradient does not see)."""
    def program(lib):
        F = lib.nn.functional
        lib.manual_seed(0)
        x = lib.randn(2, 3, 6, 6).contiguous(memory_format=lib.channels_last).requires_grad_()
        w = lib.randn(4, 3, 3, 3, requires_grad=True)
        h = F.conv2d(x, w, padding=1)
        a = F.relu(h)
        p = F.max_pool2d(a, 2)
        for t in (h, a, p):
            t.retain_grad()
        p.sum().backward()
        only_input = lib.randn(2, 3, 5, 6).contiguous(memory_format=lib.channels_last).requires_grad_()
        raw = [*lib.autograd.grad(F.conv2d(only_input, w.detach()).sum(), (only_input,)),
               *lib.autograd.grad(F.conv2d(only_input, w).sum(), (only_input, w), create_graph=True)]
        return [h.grad, a.grad, p.grad, x.grad, w.grad, *raw]
    _same_strides(program)


def test_lapack_results_laid_out_as_torch():
    """LAPACK's column-major results, with PyTorch's strides for dims of size 1, and lstsq's solution as the first
    rows of its max(m, n)-row buffer."""
    def program(lib):
        rng = np.random.RandomState(0)
        square = lib.tensor(rng.randn(2, 3, 3))
        out = [lib.linalg.householder_product(lib.tensor(rng.randn(2, 4, 3)), lib.tensor(rng.randn(2, 2))),
               *lib.linalg.lu(square), *lib.linalg.lu(square.mT),
               lib.linalg.solve(square, lib.tensor(rng.randn(2, 3, 1))),
               lib.linalg.solve_ex(square, lib.tensor(rng.randn(2, 3, 1))).result, lib.linalg.inv(square[:, :1, :1])]
        for a, b in (((3, 2), (3, 4)), ((2, 3), (2, 4)), ((2, 3, 3), (2, 3, 1)), ((2, 4, 2), (2, 4, 3)),
                     ((2, 3, 3), (2, 3))):
            out.append(lib.linalg.lstsq(lib.tensor(rng.randn(*a)), lib.tensor(rng.randn(*b))).solution)
        return out
    _same_strides(program)


def test_advanced_indexing_laid_out_as_torch():
    """``index`` is TensorIterator over the restrided source and the index tensors: a permuted source gives a
    permuted result, whichever dims are indexed, with masks, several indices apart, and None."""
    def program(lib):
        x = lib.arange(60.0).reshape(3, 4, 5)
        xt = x.permute(2, 0, 1)
        i = lib.tensor([0, 2])
        return [x[i], x[:, i], x[:, :, i], xt[i], xt[:, i], xt[:, :, i], x[i, :, i], x[i, 1:3, i], xt[xt > 30],
                x[x[:, :, 0] > 10], xt[lib.tensor([True, False, True, False, True])], xt[..., i], xt[None, i],
                xt[1, i], xt[::2, i], xt[[0, 1]], xt[:, lib.tensor([[0], [2]])], xt[i[:, None], :, i],
                x[0].t()[lib.tensor([1, 0, 1])]]
    _same_strides(program)


def test_nonzero_as_tuple_gives_views_of_its_columns():
    for lib in (tg, torch):
        cond = lib.arange(24.0).reshape(2, 3, 4) > 10
        for found in (lib.where(cond), cond.nonzero(as_tuple=True)):
            assert [t.stride() for t in found] == [(1,)] * 3
            assert all(t._base is not None for t in found)
        assert cond.nonzero().stride() == (1, 13)


def test_scatter_results_keep_the_inputs_strides_and_storage():
    """The ``*_scatter`` operators return ``clone_preserve_strides(self)`` written into: self's strides and
    offset in a copy of its whole storage (an expanded self is cloned instead)."""
    def facts(lib):
        x = lib.arange(20.0).reshape(4, 5)[1:, 1:4]
        results = [x.slice_scatter(lib.zeros(1, 3), 0, 0, 1), x.select_scatter(lib.zeros(3), 0, 1),
                   x.diagonal_scatter(lib.zeros(3)), x.as_strided_scatter(lib.zeros(2), (2,), (1,)),
                   lib.zeros(3).expand(2, 3).select_scatter(lib.ones(3), 0, 0)]
        return [(r.stride(), r.storage_offset(), r.untyped_storage().nbytes(), r.tolist()) for r in results]
    assert facts(tg) == facts(torch)


def test_views_keep_torchs_strides():
    """``unsqueeze`` keeps every stride and gives the new dim the one torch gives it (1 at the end), whatever
    NumPy's reshape would pick for dims of size 1."""
    def program(lib):
        x = lib.arange(12.0).reshape(3, 4).t()
        y = lib.as_strided(lib.arange(30.0), (1, 2, 3), (7, 3, 1))
        return [x.unsqueeze(-1), x[..., None], x.unsqueeze(0), x.unsqueeze(1), y.unsqueeze(0), y.unsqueeze(1),
                y.unsqueeze(3), y[:, None]]
    _same_strides(program)


def test_empty_tensors_have_contiguous_strides():
    def program(lib):
        return [lib.empty(0, 3), lib.zeros(2, 0, 3), lib.ones(0, 4).t(), lib.empty(0, 3).t() + 1, lib.rand(3, 0)]
    _same_strides(program)


def test_rot90_is_a_flip_and_a_transpose():
    """torch's rot90 transposes a flipped copy: a quarter turn is not contiguous, and a turn of 0 copies."""
    def program(lib):
        x = lib.arange(12.0).reshape(3, 4)
        return [x.rot90(1), x.rot90(2), x.rot90(3), x.rot90(0), x.t().rot90(1), x.rot90(1, (1, 0))]
    _same_strides(program)
    x = tg.arange(12.0).reshape(3, 4)
    turned = x.rot90(0)
    turned.add_(1)
    assert x[0, 0].item() == 0.0  # a copy, not the input


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
@pytest.mark.parametrize("view", ["transposed", "every other row", "columns window", "vector"])
def test_stack_of_strided_inputs_is_contiguous_as_torch(view, dim):
    """ATen's stack of up to 2-d inputs allocates a contiguous result (NumPy's concatenate kept a transposed
    input's order)."""
    views = {"transposed": lambda t: t.t(), "every other row": lambda t: t[::2], "columns window": lambda t: t[:, 1:3],
             "vector": lambda t: t[:, 1]}

    def strides(L):
        parts = [views[view](L.arange(12.0).reshape(3, 4) + k) for k in range(3)]
        if dim == 2 and parts[0].ndim == 1:
            return None
        out = L.stack(parts, dim)
        return tuple(out.shape), out.stride(), out.tolist()

    assert strides(tg) == strides(torch)
