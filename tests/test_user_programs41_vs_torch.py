"""A forty-first set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run (set 24 ran custom_fwd on one float tensor and a GradScaler
with two optimizers; set 39 ran autocast on attention blocks and CNNs): dtype management in training code. A
custom Function under ``custom_fwd(cast_inputs=float32/bfloat16)`` taking an integer index, a float64 weight and
Python numbers, inside and outside autocast, and one without ``cast_inputs`` whose matmul follows the region;
GradScaler("cpu") driven by hand (scale of nested lists, unscale_ twice, inf/NaN steps skipped, growth and
backoff, setters, ``update(new_scale=)`` and its refusals), its state_dict round trip and a disabled scaler;
half/bfloat16/double/float/to(dtype) on a module with integer and bool buffers, BatchNorm and Embedding; float32
master weights with a bfloat16 working copy and loss scaling by hand; SGD/Adam/AdamW stepping float16 and
bfloat16 parameters; ``set_default_dtype(torch.float64)`` across factories, layers and promotion; finfo/iinfo
tables for every dtype; ``tensor.type()`` strings and conversions; in-place ops and ``out=`` mixing half and
float; a half Embedding feeding a float32 BatchNorm. Everything is drawn from the seeded global generator, which
is torch's; values are compared to a tolerance. bfloat16 tensors are shown as float32 (NumPy has no bfloat16).

Differences these programs found, now fixed (``tests/ops/test_program41_findings_vs_torch.py``):
- a float16 batch norm with float32 parameters rounded the weight's and bias's gradients to float16 precision
  (stored float32); torch's mixed kernel keeps them float;
- ``torch.int32.to_complex()`` (any integer or bool dtype) returned the dtype itself; torch refuses "Unknown
  Complex ScalarType for Int";
- ``Module.to(..., copy=...)`` was accepted; torch refuses ".to() does not accept copy argument";
- ``out=`` of another floating dtype was cast into by mm/bmm/addmm/baddbmm/addmv/gather/where; torch refuses
  ("Expected out tensor to have dtype float, but got c10::Half instead", where's "Expected out type to be ...").

Left: a batch norm whose parameters share a float16/bfloat16 input's dtype (``model.half()`` without keeping
BatchNorm in float32) computes its statistics, running-statistic update and backward in float32/double where
torch's kernel rounds them in the reduced dtype (an ulp off in outputs and running stats); the float16 input
gradient of a mixed batch norm sums in another order (an ulp of float16 now and then); sparse Embedding gradients
(``sparse=True``) come out strided; ``float16.to_complex()`` is complex64 (torch's complex32 does not exist);
``matmul(out=)`` of 2-D and batched operands, ``mv``/``addbmm``/``linalg.multi_dot`` with a mismatched ``out=``
still cast into it (torch refuses each in its own words), and ``torch.softmax(..., out=)`` is not accepted.
"""
from __future__ import annotations

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _custom_fwd_mixed_arguments(lib, show):
    """A custom Function decorated with ``custom_fwd(cast_inputs=...)`` that takes a float tensor, an integer index
    tensor, a float64 weight and Python numbers: which arguments are cast (only floating tensors), the autocast
    state forward and backward see, inside and outside a region, and a bfloat16 ``cast_inputs``."""
    torch = lib
    torch.manual_seed(4101)
    seen: list = []

    def make(cast):
        class ScaledGather(torch.autograd.Function):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cpu", cast_inputs=cast)
            def forward(ctx, x, index, weight, scale, name):
                seen.append(("fwd", str(x.dtype), str(index.dtype), str(weight.dtype), type(scale).__name__, name,
                             torch.is_autocast_enabled("cpu")))
                ctx.save_for_backward(index, weight)
                ctx.scale = scale
                ctx.x_shape = x.shape
                return x.gather(1, index) * weight * scale

            @staticmethod
            @torch.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                index, weight = ctx.saved_tensors
                seen.append(("bwd", str(g.dtype), torch.is_autocast_enabled("cpu")))
                gx = torch.zeros(ctx.x_shape, dtype=g.dtype).scatter_add(1, index, g * weight.to(g.dtype) * ctx.scale)
                return gx, None, None, None, None

        return ScaledGather

    x = torch.randn(3, 5, requires_grad=True)
    index = torch.tensor([[0, 4], [1, 1], [3, 2]])
    weight = torch.tensor([[0.5, 2.0]], dtype=torch.float64)
    f32 = make(torch.float32)
    out = f32.apply(x, index, weight, 3, "plain")
    show(out.dtype, out.grad_fn.name(), out)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = x * 1.0
        inside = f32.apply(h.bfloat16(), index, weight, 2.5, "region")
        show(inside.dtype, torch.is_autocast_enabled("cpu"), inside)
    inside.sum().backward()
    show(x.grad.dtype, x.grad)
    x.grad = None
    bf = make(torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = bf.apply(x, index, weight, 1, "bf16")
        show(low.dtype, low.float())
    low.float().sum().backward()
    show(x.grad.dtype, x.grad)
    # outside a region cast_inputs does nothing
    plain = bf.apply(x.double(), index, weight, 1, "outside")
    show(plain.dtype, plain)
    for entry in seen:
        show(entry)
    show_outcome(show, lambda: torch.amp.custom_fwd(lambda ctx, x: x))


def _custom_fwd_without_cast(lib, show):
    """``custom_fwd`` without ``cast_inputs`` runs forward under the caller's autocast state (a matmul inside
    becomes bfloat16); ``custom_bwd`` replays it in backward; keyword arguments reach forward unchanged."""
    torch = lib
    torch.manual_seed(4102)
    seen: list = []

    class Project(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x, w):
            y = x @ w
            seen.append(("fwd", str(x.dtype), str(w.dtype), str(y.dtype), torch.is_autocast_enabled("cpu"),
                         str(torch.get_autocast_dtype("cpu"))))
            ctx.save_for_backward(x, w)
            return y

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            gx, gw = g @ w.T, x.T @ g
            seen.append(("bwd", str(g.dtype), str(gx.dtype), str(gw.dtype), torch.is_autocast_enabled("cpu")))
            return gx, gw

    x = torch.randn(4, 3, requires_grad=True)
    w = torch.randn(3, 2, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = Project.apply(x, w)
        show(y.dtype, y.grad_fn.name())
    show_outcome(show, lambda: y.sum().backward())
    show(x.grad is None or x.grad.dtype, w.grad is None or w.grad.dtype)
    y2 = Project.apply(x, w)
    y2.sum().backward()
    show(y2.dtype, x.grad.dtype)
    for entry in seen:
        show(entry)


def _grad_scaler_by_hand(lib, show):
    """GradScaler("cpu") driven by hand on a small regression: scale of a tensor and of nested lists, unscale_
    then clipping, a second unscale_ refused, inf and NaN gradients skipping the step, the scale's growth after
    ``growth_interval`` clean steps and its backoff, the getters and setters."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4103)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2)
    show(scaler.get_scale(), scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval(),
         scaler.is_enabled())
    t = torch.tensor([1.0, 2.0])
    show(scaler.scale(t), scaler.scale([t, (t * 2, t * 3)]))
    x, target = torch.randn(6, 3), torch.randn(6, 1)
    poison = [None, None, float("inf"), None, float("nan"), None, None]
    for step, bad in enumerate(poison):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), target)
        scaler.scale(loss).backward()
        if bad is not None:
            model.weight.grad[0, 0] = bad
        scaler.unscale_(opt)
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if step == 0:
            show_outcome(show, lambda: scaler.unscale_(opt))
        before = model.weight.detach().clone()
        result = scaler.step(opt)
        scaler.update()
        show(step, loss.item(), norm.isfinite().item(), result, torch.equal(before, model.weight.detach()),
             scaler.get_scale())
    show(model.weight, model.bias)
    scaler.set_growth_factor(3.0)
    scaler.set_backoff_factor(0.25)
    scaler.set_growth_interval(1)
    show(scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval())
    scaler.update(new_scale=64.0)
    show(scaler.get_scale())
    show_outcome(show, lambda: scaler.update(new_scale=torch.tensor([1.0, 2.0])))
    show_outcome(show, lambda: scaler.update(new_scale=torch.tensor([5], dtype=torch.int32)))
    show_outcome(show, lambda: scaler.scale("loss"))


def _grad_scaler_state_round_trip(lib, show):
    """GradScaler's state_dict before any step, after steps, loaded into a fresh scaler that then continues the
    same way; a disabled scaler passing everything through; refusals of a bad load."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4104)
    fresh = torch.amp.GradScaler("cpu")
    show(sorted(fresh.state_dict().items()))
    model = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=3)
    x = torch.randn(5, 2)
    for _ in range(4):
        opt.zero_grad()
        scaler.scale(model(x).pow(2).mean()).backward()
        scaler.step(opt)
        scaler.update()
    state = scaler.state_dict()
    show(sorted((k, v) for k, v in state.items()))
    other = torch.amp.GradScaler("cpu")
    other.load_state_dict(state)
    show(other.get_scale(), other.get_growth_interval(), sorted(other.state_dict().items()) == sorted(state.items()))
    for s in (scaler, other):
        for _ in range(2):
            opt.zero_grad()
            scaler_loss = s.scale(model(x).pow(2).mean())
            scaler_loss.backward()
            s.step(opt)
            s.update()
        show(s.get_scale(), s.state_dict()["_growth_tracker"])
    off = torch.amp.GradScaler("cpu", enabled=False)
    loss = model(x).sum()
    show(off.is_enabled(), off.scale(loss) is loss, off.get_scale(), off.state_dict(), off.get_growth_factor())
    before = model.weight.detach().clone()
    opt.zero_grad()
    off.scale(loss).backward()
    off.unscale_(opt)
    off.unscale_(opt)
    show(off.step(opt), torch.equal(before, model.weight.detach()))
    off.update()
    show(off.get_scale(), off.state_dict())
    show_outcome(show, lambda: torch.amp.GradScaler("cpu").load_state_dict({"scale": 2.0}))
    show_outcome(show, lambda: off.load_state_dict(state))


def _module_dtype_conversions(lib, show):
    """A module with integer and bool buffers, a BatchNorm and an Embedding converted by half/bfloat16/double/
    float/to(dtype): floating parameters and buffers follow, integer and bool ones stay; num_batches_tracked keeps
    counting in int64; a non-floating ``to`` is refused; ``.to`` returns the module itself."""
    torch, nn = lib, lib.nn
    torch.manual_seed(4105)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(6, 4, padding_idx=0)
            self.bn = nn.BatchNorm1d(4)
            self.head = nn.Linear(4, 3)
            self.register_buffer("vocab_ids", torch.arange(6))
            self.register_buffer("mask", torch.tensor([True, False, True]))
            self.register_buffer("temperature", torch.tensor(0.5))

        def forward(self, tokens):
            return self.head(self.bn(self.emb(tokens).mean(1))) / self.temperature

    def dtypes(m):
        return [(name, str(t.dtype)) for name, t in m.state_dict().items()]

    model = Tagger()
    tokens = torch.tensor([[1, 2, 0], [3, 5, 4]])
    show(dtypes(model))
    model(tokens)
    show(model.bn.num_batches_tracked, model.bn.running_mean)
    same = model.double()
    show(same is model, dtypes(model))
    out = model(tokens)
    show(out.dtype, out, model.bn.num_batches_tracked)
    model.half()
    show(dtypes(model), model.emb.weight.requires_grad, type(model.emb.weight).__name__)
    show(model.emb(tokens).dtype, model.emb(tokens))
    model.bfloat16()
    show(dtypes(model), model.bn.running_var.float(), model.bn.num_batches_tracked)
    model.bn.float()  # (the usual recipe: normalisation kept in float32)
    show(model.emb(tokens).dtype, model.bn.weight.dtype, model.bn.running_mean.dtype)
    model.to(torch.float32)
    show(dtypes(model), model.to(torch.float32) is model)
    model.to(dtype=torch.float64)
    show(model.head.weight.dtype, model.mask.dtype, model.vocab_ids.dtype)
    show_outcome(show, lambda: model.to(torch.int32))
    show_outcome(show, lambda: model.to(torch.bool))
    model.float()
    model.head.weight.grad = torch.ones(3, 4)
    model.half()
    show(model.head.weight.grad.dtype, model.head.weight.dtype)
    show_outcome(show, lambda: model(tokens.float()))


def _master_weights_by_hand(lib, show):
    """Mixed precision without amp: float32 master weights, a bfloat16 working copy for forward and backward,
    a loss scaled by hand, gradients copied up, checked for overflow, unscaled and stepped, the copy refreshed."""
    torch = lib
    torch.manual_seed(4106)
    master_w = torch.randn(4, 3) * 0.3
    master_b = torch.zeros(3)
    masters = [master_w, master_b]
    opt = torch.optim.SGD(masters, lr=0.1, momentum=0.9)
    for p in masters:
        p.requires_grad_()
    x = torch.randn(8, 4).bfloat16()
    y = torch.randn(8, 3).bfloat16()
    loss_scale = 128.0
    for step in range(4):
        w16 = master_w.detach().bfloat16().requires_grad_()
        b16 = master_b.detach().bfloat16().requires_grad_()
        pred = x @ w16 + b16
        loss = ((pred - y) ** 2).mean()
        (loss * loss_scale).backward()
        show(step, loss.dtype, loss.float(), w16.grad.dtype, w16.grad.float()[0])
        grads = [w16.grad.float(), b16.grad.float()]
        if step == 2:
            grads[0][0, 0] = float("inf")
        finite = all(g.isfinite().all() for g in grads)
        if finite:
            for p, g in zip(masters, grads):
                p.grad = g / loss_scale
            opt.step()
            opt.zero_grad()
        else:
            loss_scale /= 2
        show(finite, loss_scale, master_w.dtype, master_w[0], opt.state[master_w].get("momentum_buffer") is not None)
    show(master_w.bfloat16().float() - master_w)
    show(torch.equal(master_w.bfloat16().float(), master_w.detach().bfloat16().float()))


def _optimizers_on_low_precision(lib, show):
    """SGD with momentum and Adam stepping float16 and bfloat16 parameters directly: the dtypes of the states,
    the values after a few steps, and the tiny updates that round away in half precision."""
    torch = lib
    torch.manual_seed(4107)
    start = torch.randn(5) * 4
    for dtype in (torch.float16, torch.bfloat16):
        for name, make in (("sgd", lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9, nesterov=True)),
                           ("adam", lambda ps: torch.optim.Adam(ps, lr=1e-3)),
                           ("adamw", lambda ps: torch.optim.AdamW(ps, lr=1e-2, weight_decay=0.1))):
            p = start.clone().to(dtype).requires_grad_()
            opt = make([p])
            for _ in range(3):
                opt.zero_grad()
                (p.float() ** 2).sum().backward()
                opt.step()
            state = opt.state[p]
            show(name, str(dtype), p.dtype, p.float(), sorted((k, str(v.dtype)) for k, v in state.items()))
    tiny = torch.tensor([2048.0], dtype=torch.float16, requires_grad=True)
    sgd = torch.optim.SGD([tiny], lr=0.5)
    tiny.grad = torch.tensor([1.0], dtype=torch.float16)
    sgd.step()
    show(tiny, tiny.item() == 2048.0)
    show_outcome(show, lambda: torch.optim.SGD([torch.tensor([1, 2])], lr=0.1))


def _default_dtype_float64(lib, show):
    """``set_default_dtype(torch.float64)`` across a script: factories, arange/linspace/logspace, layers built
    under it, Python-scalar promotion of integer tensors, ``torch.tensor`` of floats and complex numbers, numpy
    arrays keeping theirs; ``set_default_dtype`` refusals; the default restored afterwards."""
    torch, nn = lib, lib.nn
    import numpy as np
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        show(torch.get_default_dtype(), torch.zeros(2).dtype, torch.ones(1, dtype=None).dtype, torch.empty(0).dtype,
             torch.full((2,), 1.5).dtype, torch.full((2,), 3).dtype, torch.full((1,), True).dtype)
        show(torch.arange(4).dtype, torch.arange(0.0, 1.0, 0.25), torch.arange(0, 1, 0.3).dtype,
             torch.linspace(0, 1, 5), torch.logspace(0, 2, 3), torch.eye(2).dtype)
        show(torch.tensor([1, 2.5]).dtype, torch.tensor(1.0).dtype, torch.tensor([1j]).dtype,
             torch.tensor(2 + 0.5j), torch.tensor([True]).dtype, torch.tensor([]).dtype)
        show(torch.as_tensor(np.float32(1.5)).dtype, torch.as_tensor(np.array([1.0], dtype=np.float32)).dtype,
             torch.tensor(np.array([1.0])).dtype, torch.as_tensor([1.0, 2.0]).dtype)
        ints = torch.tensor([1, 2, 3])
        show((ints * 0.5).dtype, ints / 2, (ints + True).dtype, torch.sqrt(ints), ints.float().dtype,
             (ints * (1 + 1j)).dtype)
        show(torch.randn(2).dtype, torch.rand(1).dtype, torch.randint(0, 3, (2,)).dtype, torch.zeros_like(ints).dtype)
        lin = nn.Linear(2, 2)
        show(lin.weight.dtype, nn.LayerNorm(2).weight.dtype, nn.BatchNorm1d(2).running_mean.dtype,
             nn.Embedding(3, 2).weight.dtype)
        show(lin(torch.ones(1, 2)).dtype)
        show_outcome(show, lambda: lin(torch.ones(1, 2, dtype=torch.float32)))
        show(torch.float16.is_floating_point, (torch.tensor([1.0], dtype=torch.float16) * 2.5).dtype,
             (torch.tensor([1.0], dtype=torch.float32) + torch.tensor(2.0)).dtype)
        show_outcome(show, lambda: torch.set_default_dtype(torch.int64))
        show_outcome(show, lambda: torch.set_default_dtype(torch.complex64))
        show_outcome(show, lambda: torch.set_default_dtype(float))
        show(torch.get_default_dtype())
    finally:
        torch.set_default_dtype(before)
    show(torch.get_default_dtype(), torch.tensor([1.0]).dtype, torch.tensor([1j]).dtype)


def _finfo_iinfo_tables(lib, show):
    """finfo for every floating and complex dtype (eps, tiny, smallest_normal, max, min, resolution, bits, dtype),
    iinfo for every integer dtype, their reprs, and their refusals."""
    torch = lib
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128):
        fi = torch.finfo(dtype)
        show(str(dtype), fi.bits, fi.eps, fi.tiny, fi.smallest_normal, fi.max, fi.min, fi.resolution, fi.dtype)
        show(repr(fi))
    for dtype in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint16, torch.uint32,
                  torch.uint64):
        ii = torch.iinfo(dtype)
        show(str(dtype), ii.bits, ii.min, ii.max, ii.dtype, repr(ii))
    show(torch.finfo(), torch.finfo(torch.half) == torch.finfo(torch.float16), torch.iinfo(torch.long).max)
    for bad in (torch.int32, torch.bool, torch.uint8):
        show_outcome(show, lambda bad=bad: torch.finfo(bad))
    for bad in (torch.float32, torch.bool, torch.complex64):
        show_outcome(show, lambda bad=bad: torch.iinfo(bad))
    x = torch.tensor([1.0, 1.0 + torch.finfo(torch.float32).eps, torch.finfo(torch.float32).tiny / 2])
    show(x, x[2] > 0)
    h = torch.tensor([torch.finfo(torch.float16).max], dtype=torch.float16)
    show(h, h * 2, torch.tensor([torch.finfo(torch.float16).tiny], dtype=torch.float16) / 2)


def _type_strings_and_conversions(lib, show):
    """``tensor.type()`` strings for every dtype, ``type(dtype)``/``type(name)``/``type(TensorClass)``
    conversions with and without grad, the dtype's properties, and the refusals."""
    torch = lib
    x = torch.tensor([1.5, -2.25])
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                  torch.int16, torch.int8, torch.uint8, torch.bool, torch.complex64):
        show(str(dtype), x.to(dtype).type())
    show(x.type(torch.float64).dtype, x.type("torch.IntTensor"), x.type(torch.ShortTensor), x.type("torch.HalfTensor"))
    show(x.type(torch.float32) is x, x.type("torch.FloatTensor") is x, x.type(torch.int64).dtype)
    w = torch.tensor([0.5, 2.0], requires_grad=True)
    d = w.type(torch.DoubleTensor)
    d.sum().backward()
    show(d, w.grad)
    show(type(torch.float32).__name__, type(x).__name__, torch.float32 == torch.float, torch.double is torch.float64)
    for dtype in (torch.float16, torch.bfloat16, torch.complex64, torch.int8, torch.uint8, torch.bool):
        show(str(dtype), dtype.is_floating_point, dtype.is_complex, dtype.is_signed, dtype.itemsize)
    show(torch.float32.to_complex(), torch.complex128.to_real(), torch.bfloat16.to_complex(), torch.int32.to_real())
    show_outcome(show, lambda: torch.int32.to_complex())
    show_outcome(show, lambda: x.type("torch.NopeTensor"))
    show_outcome(show, lambda: x.type("float"))
    show_outcome(show, lambda: x.type(3))
    show(torch.FloatTensor([1, 2]).dtype, torch.DoubleTensor(2).shape, torch.LongTensor([3]).dtype,
         torch.BoolTensor([1, 0]))
    show_outcome(show, lambda: torch.LongTensor([1.5]))
    show(isinstance(x, torch.FloatTensor), isinstance(x.double(), torch.FloatTensor), x.is_floating_point())


def _in_place_mixed_precision(lib, show):
    """In-place ops and ``out=`` mixing half and float: float32 added into a half tensor (computed in float,
    rounded once), the refusals the other way round (float into integer, into bool), a half overflow from a
    Python number, ``copy_`` and index assignment across dtypes, ``out=`` into half and into the wrong kind."""
    torch = lib
    torch.manual_seed(4110)
    h = torch.tensor([1.0, 2048.0, 0.1, 65000.0], dtype=torch.float16)
    f = torch.tensor([1e-4, 1.0, 0.2, 1000.0])
    r = h.clone().add_(f)
    show(r.dtype, r)
    show(h.clone().mul_(torch.tensor(1.5, dtype=torch.float64)), h.clone().addcmul_(f, f, value=2))
    back = f.clone().add_(h)
    show(back.dtype, back)
    i = torch.tensor([1, 2, 3])
    show_outcome(show, lambda: i.add_(f[:3]))
    show_outcome(show, lambda: i.mul_(0.5))
    show_outcome(show, lambda: torch.tensor([True, False]).add_(1))
    show_outcome(show, lambda: h.clone().add_(torch.tensor([1j])))
    show(h.clone().add_(70000.0), h.clone().fill_(1e-8), torch.tensor([1.0], dtype=torch.float16).add_(3, alpha=2))
    show_outcome(show, lambda: h.clone().masked_fill_(h > 0, 1e6))
    show_outcome(show, lambda: h.clone().fill_(torch.tensor(1e6)))
    buf = torch.empty(4, dtype=torch.float16)
    torch.add(f, f, out=buf)
    show(buf, torch.mul(f, 3, out=torch.empty(4, dtype=torch.float16)))
    show_outcome(show, lambda: torch.add(f, f, out=torch.empty(4, dtype=torch.int64)))
    show_outcome(show, lambda: torch.add(i, i, out=torch.empty(3, dtype=torch.float16)))
    show_outcome(show, lambda: torch.sum(f, 0, out=torch.empty((), dtype=torch.float16)))
    c = torch.empty(4, dtype=torch.float16)
    c.copy_(torch.tensor([1e5, -1e5, 1e-9, 3.14159], dtype=torch.float64))
    show(c)
    c[1:3] = torch.tensor([0.333, 7.0])
    c[0] = 2.5
    show(c, c.dtype)
    w = torch.zeros(3, dtype=torch.float16, requires_grad=True)
    show_outcome(show, lambda: w.add_(1.0))
    with torch.no_grad():
        w.add_(torch.tensor([0.1, 0.2, 0.3]))
    show(w, w.requires_grad, w.grad_fn)
    g = torch.tensor([1.0, 2.0], requires_grad=True)
    y = g.half() * 1
    y.add_(torch.tensor([0.5, 0.25]))
    y.sum().backward()
    show(y, y.grad_fn.name(), g.grad)


def _embedding_batchnorm_low_precision(lib, show):
    """An Embedding converted to bfloat16 and float16 feeding a BatchNorm kept in float32 (half input, float
    statistics), trained one step: the forward dtypes, the running statistics, num_batches_tracked, the
    gradients' dtypes; a max_norm Embedding renormalising its rows in float64, and the index refusals."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(4111)
    for dtype in (torch.bfloat16, torch.float16):
        emb = nn.Embedding(5, 3).to(dtype)
        bn = nn.BatchNorm1d(3)
        tokens = torch.tensor([0, 2, 2, 4])
        e = emb(tokens)
        if dtype == torch.float16:
            out = bn(e)
        else:
            out = bn(e.float())
        show(str(dtype), e.dtype, out.dtype, out.float(), bn.running_mean, bn.running_var, bn.num_batches_tracked)
        out.float().pow(2).sum().backward()
        # (float16's input gradient is shown by its dtype: its float sums are ordered otherwise, Left below)
        shown = emb.weight.grad.float() if dtype == torch.bfloat16 else emb.weight.grad.dtype
        show(emb.weight.grad.dtype, shown, bn.weight.grad.dtype, bn.weight.grad)
        bn.eval()
        show(bn(e.detach().float()))
    capped = nn.Embedding(3, 2, max_norm=1.0).double()
    with torch.no_grad():
        capped.weight.mul_(5)
    show(capped(torch.tensor([0, 2])).norm(dim=1), capped.weight.norm(dim=1))
    show_outcome(show, lambda: F.embedding(torch.tensor([0.0, 1.0]), torch.randn(3, 2)))
    show_outcome(show, lambda: nn.Embedding(3, 2)(torch.tensor([1, 2], dtype=torch.int32)).dtype)


PROGRAMS = [
    _custom_fwd_mixed_arguments,
    _custom_fwd_without_cast,
    _grad_scaler_by_hand,
    _grad_scaler_state_round_trip,
    _module_dtype_conversions,
    _master_weights_by_hand,
    _optimizers_on_low_precision,
    _default_dtype_float64,
    _finfo_iinfo_tables,
    _type_strings_and_conversions,
    _in_place_mixed_precision,
    _embedding_batchnorm_low_precision,
]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    assert_same_transcript(program, rtol=1e-5, atol=1e-6)
