"""A twenty-fourth set of ordinary PyTorch programs, run with ``import tracegrad as torch`` and with torch, and compared.

These add what the other program files do not run: dtype and precision notebooks. A promotion table of every
dtype against Python bools, ints and floats with result_type/promote_types/can_cast, 0-d tensors, bool
arithmetic's refusals and ``where`` with out-of-range numbers; floor and truncating division, remainder and fmod
with negatives, in place and by zero; uint8 image arithmetic wrapping around, integer overflow of every width,
iinfo, integer powers and thresholds whose numbers the dtype cannot hold; conversions (``.long()`` of negatives,
``round(decimals=)``, every ``.type`` form, ``.to`` returning self, casts with grad, Python ``int``/``round``/
``math.trunc`` of tensors) and float-to-integer casts of NaN, inf and out-of-range values; float16/bfloat16
rounding, overflow to inf, finfo fields and equality, half sums and cumsums that stall at 2048; eps-based
comparisons and isclose/allclose with rtol/atol/equal_nan and their refusals; a classifier trained under CPU
bfloat16 autocast (result dtypes op by op, gradients' dtypes, nested and float16 regions, the deprecated
``torch.cpu.amp`` spelling); a custom Function with ``custom_fwd(cast_inputs=)``/``custom_bwd``; a GradScaler with
two optimizers, a skipped step, growth/backoff and its misuse errors; loss scaling by hand for a float16 model;
Kahan summation against pairwise sums and cumsum drift; and ``set_default_dtype`` (float64, float16, bfloat16)
with factories and layers. Everything is drawn from the seeded global generator, which is torch's; programs
without a matrix product are compared bit for bit, the others (``APPROXIMATE``) to a tolerance.

Differences these programs found, now fixed (``tests/ops/test_program24_findings_vs_torch.py``):
- a Python int that an integer kernel converts to its dtype was wrapped silently or refused in NumPy's words:
  ``where(mask, int8_tensor, 300)`` gave 44, ``int8_tensor ** 300`` computed, ``F.threshold(uint8, 50, 256)`` and
  ``addcmul(value=300)`` raised ``OverflowError: Python integer 300 out of bounds for uint8``; torch refuses
  "value cannot be converted to type int8_t without overflow" and reads -1 as 255 for uint8 (threshold's bound
  -1 on uint8 replaces everything); threshold's half ``value`` 70000 gave inf where torch refuses it;
- ``torch.finfo``/``iinfo`` compared by identity (``finfo(torch.half) == finfo(torch.float16)`` was False),
  refused ``finfo(float)``/``iinfo(int)`` (torch: float64's, int64's), took ``finfo(None)`` as the default dtype and
  worded a non-dtype argument as a non-floating dtype (torch's parser: "must be torch.dtype, not str");
- ``torch.cpu.amp.autocast``/``GradScaler`` printed as ``torch.amp``'s classes.

Left: float32 ``exp`` (so ``exp`` of an integer or bool tensor) is an ulp off torch's MKL ``vsExp`` (2.7182817 for
torch's, 2.718282 here); the float8 dtypes (``float8_e4m3fn``, ``float8_e5m2``) and ``complex32`` (half plus
``1j``) do not exist; float64 ``var``/``std`` of thousands of elements are a few ulp off torch's Welford cascade;
threshold's bfloat16 ``value`` out of range is refused naming float (torch: c10::BFloat16);
``torch._amp_foreach_non_finite_check_and_unscale_``/``_amp_update_scale_`` do not exist and GradScaler's
``_growth_tracker`` is a Python int (torch: an int32 tensor).
"""

from __future__ import annotations

import math

import pytest
from _tutorial_lib import assert_same_transcript, show_outcome


def _promotion_tables(lib, show):
    """The type-promotion tables a user prints to learn the rules: a tensor of each dtype against Python
    scalars, 0-d tensors and tensors of other kinds, result_type/promote_types/can_cast, and bool's refusals."""
    torch = lib
    dtypes = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
              torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]
    scalars = [True, 2, 2.5]
    for dt in dtypes:
        t = torch.ones(2, dtype=dt)
        row = []
        for s in scalars:
            try:
                row.append(str((t + s).dtype))
            except Exception as e:  # noqa: BLE001 - the error is what is printed
                row.append(type(e).__name__)
        show(dt, row, torch.result_type(t, 2.5), torch.result_type(t, 1))
    for a in dtypes[:6]:
        show(a, [str(torch.promote_types(a, b)) for b in dtypes])
        show(a, [torch.can_cast(a, b) for b in dtypes], [torch.can_cast(b, a) for b in dtypes])
    i32 = torch.tensor([7, -7], dtype=torch.int32)
    show(i32 / torch.tensor([2, 2], dtype=torch.int32), (i32 * 1.5).dtype, (i32 * torch.tensor(1.5, dtype=torch.float64)))
    show((i32 + torch.tensor(3, dtype=torch.int64)).dtype, (i32 + torch.tensor([3], dtype=torch.int64)).dtype)
    show((torch.tensor([1, 2], dtype=torch.uint8) + torch.tensor([1, 2], dtype=torch.int8)).dtype)
    show((torch.ones(2, dtype=torch.float16) + torch.tensor(1.0)).dtype,
         (torch.ones(2, dtype=torch.float16) + torch.tensor([1.0])).dtype,
         (torch.ones(2, dtype=torch.float16) * torch.ones(2, dtype=torch.bfloat16)).dtype)
    flags = torch.tensor([True, False, True])
    show(flags + flags, flags * 3, flags.sum(), flags.float().mean(), flags & torch.tensor([True, True, False]))
    show_outcome(show, lambda: flags - flags)
    show_outcome(show, lambda: -flags)
    show_outcome(show, lambda: ~torch.tensor([1.5]))
    show_outcome(show, lambda: torch.tensor([1.0]) | torch.tensor([2.0]))
    show(~flags, ~torch.tensor([0, 5], dtype=torch.uint8), torch.logical_not(torch.tensor([0.0, 2.0])))
    show(torch.result_type(torch.tensor(1, dtype=torch.int8), 300), torch.result_type(2, 3.0),
         torch.result_type(torch.tensor([1.0], dtype=torch.float16), torch.tensor(1.0, dtype=torch.float64)))
    show_outcome(show, lambda: torch.promote_types(torch.float32, "float64"))
    show_outcome(show, lambda: torch.can_cast(torch.float32, 3))
    show((torch.ones(2) * 1j).dtype, (torch.ones(2, dtype=torch.float64) + 1j).dtype, (torch.tensor([1, 2]) * 1j).dtype)
    mask = torch.tensor([True, False])
    small = torch.tensor([1, 2], dtype=torch.int8)
    show(torch.where(mask, small, 100), torch.where(mask, small, 2.5), torch.where(mask, small, torch.tensor(300)))
    show_outcome(show, lambda: torch.where(mask, small, 300))
    show_outcome(show, lambda: torch.where(mask, torch.tensor([1, 2], dtype=torch.uint8), 256))
    show(torch.where(mask, torch.tensor([1, 2], dtype=torch.uint8), -1))


def _integer_division_signs(lib, show):
    """Floor versus truncating division of negatives: ``//``, ``div`` with each rounding mode, ``remainder`` and
    ``fmod`` (the sign follows the divisor or the dividend), on integers and floats, and division by zero."""
    torch = lib
    a = torch.tensor([7, -7, 7, -7, 0, 6])
    b = torch.tensor([2, 2, -2, -2, 3, -4])
    show(a // b, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"), a / b)
    show(a % b, torch.remainder(a, b), torch.fmod(a, b), torch.floor_divide(a, b))
    show(a // 2, a % -3, torch.fmod(a, -3), -7 // torch.tensor(2), -7 % torch.tensor(3))
    af, bf = a.double() + 0.5, b.double()
    show(af // bf, af % bf, torch.fmod(af, bf), torch.div(af, bf, rounding_mode="trunc"))
    show(torch.tensor([-0.0, 0.0, 5.0]) // torch.tensor([3.0, -3.0, 0.0]),
         torch.tensor([1.0, -1.0, 0.0]) / 0.0, torch.tensor([5.5, -5.5]) % float("inf"))
    show(torch.remainder(torch.tensor([-1.0, 1.0]), float("-inf")), torch.fmod(torch.tensor([1.0]), 0.0))
    show_outcome(show, lambda: torch.tensor([5, 3]) // torch.tensor([0, 1]))
    show_outcome(show, lambda: torch.tensor([5]) % 0)
    show_outcome(show, lambda: torch.fmod(torch.tensor([5]), 0))
    show_outcome(show, lambda: torch.div(a, b, rounding_mode="round"))
    x = torch.tensor([9, -9])
    show_outcome(show, lambda: x.div_(2))
    x.floor_divide_(2)
    show(x, x.dtype)
    x.div_(2, rounding_mode="trunc")
    show(x, x.dtype)
    u = torch.tensor([250, 3], dtype=torch.uint8)
    show(u // 2, u % 7, torch.div(u, 7, rounding_mode="floor"), u / 7)
    show((torch.tensor([-128], dtype=torch.int8) // -1), torch.tensor([-128], dtype=torch.int8) % -1)
    big = torch.tensor([2**62 + 1, -(2**62) - 1])
    show(big // 3, big % 3, (big.double() // 3).long())
    show(torch.remainder(5, torch.tensor([-3, 3])), torch.fmod(torch.tensor([-5.5]), torch.tensor([2])))


def _overflow_and_wraparound(lib, show):
    """Integer types wrapping around where a user expects saturation: uint8 image arithmetic, int8/int16/int32
    overflow, sums that promote, ``abs``/negation of the smallest value, and iinfo's fields."""
    torch = lib
    img = torch.tensor([[10, 200, 250], [0, 128, 255]], dtype=torch.uint8)
    show(img + 100, img * 2, img - 20, 255 - img, img.sum(), img.sum().dtype, img.sum(dtype=torch.uint8))
    show((img.int() + 100).clamp(0, 255).to(torch.uint8), img.float().mean(), img.double().std())
    show_outcome(show, lambda: img.mean())
    show(img.cumsum(1), img.cumsum(1).dtype, img.prod(1), img.max(), torch.max(img, 1).indices)
    show(-img, img.neg(), torch.tensor([100], dtype=torch.int8) + 100, torch.tensor([-100], dtype=torch.int8) - 100)
    i16 = torch.tensor([300, -300], dtype=torch.int16)
    show(i16 * 200, i16 * i16, i16.to(torch.int8), i16.to(torch.uint8))
    i32 = torch.tensor([2**31 - 1, -(2**31)], dtype=torch.int32)
    show(i32 + 1, i32 - 1, i32.abs(), -i32, i32 * 2, i32.sum(), i32.sum().dtype)
    i64 = torch.tensor([2**63 - 1])
    show(i64 + 1, i64 * 3, torch.tensor([-(2**63)]).abs())
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        info = torch.iinfo(dt)
        show(info, info.bits, info.min, info.max, info.dtype, info == torch.iinfo(dt), info == torch.iinfo(torch.int8))
    show(torch.iinfo(int), torch.iinfo(int) == torch.iinfo(torch.int64))
    show_outcome(show, lambda: torch.iinfo(bool))
    show_outcome(show, lambda: torch.iinfo("int32"))
    show(torch.iinfo(torch.uint8).max + 1, torch.tensor(torch.iinfo(torch.int32).max, dtype=torch.int32) + 1)
    show_outcome(show, lambda: torch.iinfo(torch.float32))
    show_outcome(show, lambda: torch.tensor([300], dtype=torch.uint8))
    show_outcome(show, lambda: torch.full((2,), 300, dtype=torch.uint8))
    show_outcome(show, lambda: torch.tensor([1, 2], dtype=torch.uint8) + 300)
    show_outcome(show, lambda: torch.tensor([1], dtype=torch.int8).fill_(128))
    show(torch.tensor([1, 2], dtype=torch.int8) * torch.tensor(300), torch.tensor([3], dtype=torch.int8) ** 5,
         torch.tensor([2]) ** 63, torch.tensor([2], dtype=torch.int32).pow(31))
    show_outcome(show, lambda: torch.tensor([2]) ** -1)
    show_outcome(show, lambda: torch.tensor([2, 3], dtype=torch.int8) ** 300)
    show_outcome(show, lambda: torch.tensor([2, 3], dtype=torch.int16).pow_(2**20))
    show(torch.tensor([2, 3], dtype=torch.int8) ** torch.tensor(300), 300 ** torch.tensor([1, 2], dtype=torch.int8))
    pixels = torch.tensor([3, 40, 200], dtype=torch.uint8)
    show(torch.nn.functional.threshold(pixels, 50, 0), torch.nn.functional.threshold(pixels, -1, 7))
    show(torch.nn.functional.threshold(pixels, 50, -1))
    show_outcome(show, lambda: torch.nn.functional.threshold(pixels, 300, 0))
    show_outcome(show, lambda: torch.nn.functional.threshold(pixels, 50, 256))
    show_outcome(show, lambda: torch.nn.functional.threshold(torch.tensor([1.0, 9.0], dtype=torch.half), 5, 7e4))
    show(pixels.addcmul(pixels, pixels, value=-1))
    show_outcome(show, lambda: pixels.addcmul(pixels, pixels, value=300))
    show_outcome(show, lambda: torch.tensor([1], dtype=torch.int8).addcmul_(torch.tensor([1], dtype=torch.int8),
                                                                         torch.tensor([1], dtype=torch.int8), value=-129))
    show(torch.arange(250, 256, dtype=torch.uint8), torch.arange(0, 300, 100, dtype=torch.uint8))


def _conversions_and_truncation(lib, show):
    """Conversions a user tries: .long()/.int() truncating negatives toward zero, rounding modes, the ``.type``
    forms, ``.to`` returning self, bool conversions, and the complex-to-real warning."""
    torch = lib
    x = torch.tensor([-2.7, -2.5, -0.5, 0.5, 1.5, 2.5, 2.9])
    show(x.long(), x.int(), x.short(), x.round(), x.floor().long(), x.ceil().long(), x.trunc(), x.round(decimals=1))
    show(torch.tensor([1.2345, 125.5, -0.125]).round(decimals=2), torch.tensor([1234.5]).round(decimals=-2))
    show(x.type(), x.double().type(), x.type(torch.int32), x.type("torch.DoubleTensor").dtype,
         x.type("torch.IntTensor"), x.type(torch.DoubleTensor).dtype)
    show_outcome(show, lambda: x.type("torch.FloatTensr"))
    show_outcome(show, lambda: x.type("float64"))
    show(x.to(torch.float32) is x, x.to(torch.float32, copy=True) is x, x.float() is x, x.to(x) is x,
         x.to(torch.float64).dtype, x.to(torch.ones(1, dtype=torch.int16)).dtype, x.to("cpu", torch.half).dtype)
    show(x.bool(), torch.tensor([0.0, -0.0, float("nan"), 1e-45]).bool(), torch.tensor([0, 3, -1]).bool())
    show(x.half(), x.double(), x.bfloat16().float(), x.bfloat16().dtype, x.char(), x.byte().dtype)
    show(torch.tensor([True, False]).float(), torch.tensor([True]).long() + True)
    z = torch.tensor([1 + 2j, -3.5 - 1j])
    show(z.real, z.imag, z.abs(), z.to(torch.complex128).dtype)
    show(z.float())
    show(z.to(torch.int32))
    show_outcome(show, lambda: torch.tensor([1.5]).to(torch.int32).requires_grad_())
    w = torch.tensor([1.7, -1.7], requires_grad=True)
    y = w.double() * 2
    show(y.grad_fn.name(), y.grad_fn.next_functions[0][0].name())
    y.sum().backward()
    show(w.grad, w.grad.dtype)
    h = w.half()
    show(h.grad_fn.name(), h.requires_grad, w.long().requires_grad, w.long().grad_fn)
    n = torch.tensor(5.9)
    show(int(n), float(torch.tensor(3)), bool(torch.tensor(0.1)), n.item(), torch.tensor(-5.9).int().item())
    show(int(torch.tensor(-5.9)), math.trunc(torch.tensor(-5.9)), round(torch.tensor(2.5)), math.floor(torch.tensor(-2.5)))
    show_outcome(show, lambda: int(torch.tensor(float("nan"))))
    show_outcome(show, lambda: int(torch.tensor(float("inf"))))
    show_outcome(show, lambda: bool(torch.tensor([1, 2])))


def _out_of_range_float_to_int(lib, show):
    """Float-to-integer conversions of values the integer type cannot hold (NaN, inf, 1e10, -1, 300): what each
    integer type reads, through ``.to``, the integer constructors and copy_ into an integer tensor."""
    torch = lib
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), 1e10, -1e10, 3e9, -3e9])
    show(special.long(), special.int())
    show(special.double().long(), special.double().int())
    small = torch.tensor([-1.0, 255.9, 256.0, 300.0, -129.0, 127.5, 1000.7])
    show(small.to(torch.int16), small.to(torch.int32))
    show(small.to(torch.uint8), small.to(torch.int8))
    show(torch.tensor([1e5, -1e5]).half(), torch.tensor([7e4]).half(), torch.tensor([65519.0, 65520.0]).half())
    show(torch.tensor([3.4e38, 1e39]).bfloat16().float(), torch.tensor([1e308]).float())
    dst = torch.zeros(3, dtype=torch.int32)
    dst.copy_(torch.tensor([-1.9, 2.9, 1e3]))
    show(dst)
    dst[0] = 7.9
    dst[1:] = torch.tensor([-3.3, 4.4])
    show(dst)
    show_outcome(show, lambda: dst.add_(0.5))
    dst += 2
    show(dst)
    show(torch.tensor([2**53 + 1], dtype=torch.int64).double().long(), torch.tensor([2**24 + 1]).float().long(),
         torch.tensor([16777217], dtype=torch.int32).float().int())
    show(torch.tensor([-0.5, 0.5, 1.5, 2.5, -2.5]).round().long(), torch.tensor([0.49999997]).round())


def _half_and_bfloat16_rounding(lib, show):
    """float16 and bfloat16 arithmetic: what rounds away (1 + eps/2), what overflows to inf, sums and means that
    lose digits, the finfo fields for every floating type, and printing."""
    torch = lib
    for dt in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        fi = torch.finfo(dt)
        show(fi.bits, fi.eps, fi.max, fi.min, fi.tiny, fi.smallest_normal, fi.resolution, fi.dtype)
        one = torch.tensor(1.0, dtype=dt)
        show(dt, (one + fi.eps).item(), (one + fi.eps / 2).item(), (one + fi.eps * 0.75).item(), (one - fi.eps / 2).item())
        show((torch.tensor(fi.max, dtype=dt) * 2).item(), (torch.tensor(fi.tiny, dtype=dt) / 2 ** 30).item())
    show(torch.finfo(), torch.finfo().eps, torch.finfo(torch.float16), torch.finfo(float), torch.finfo(complex).eps)
    show(torch.finfo(torch.half) == torch.finfo(torch.float16), torch.finfo(torch.complex64) == torch.finfo(torch.float32),
         torch.finfo(torch.bfloat16) != torch.finfo(torch.float16), torch.finfo(float) == torch.finfo(torch.float64))
    show_outcome(show, lambda: torch.finfo(torch.int32))
    show_outcome(show, lambda: torch.finfo("float32"))
    show_outcome(show, lambda: torch.finfo(None))
    show_outcome(show, lambda: torch.finfo(int))
    h = torch.tensor([0.1, 1 / 3, 1000.1, 2049.0, 65504.0, 6e-8, 1e-8], dtype=torch.float16)
    show(h, h.float(), h + h, h * 2, h.sum(), h[:4].mean())
    b = torch.tensor([0.1, 1 / 3, 1000.1, 257.0, 3e38], dtype=torch.bfloat16)
    show(b.float(), (b + b).float(), (b * 2).float(), b.dtype)
    print_half = repr(torch.tensor([1.0, 2.5, 65504.0], dtype=torch.float16))
    print_bf16 = repr(torch.tensor([1.0, 0.1, 3.14159], dtype=torch.bfloat16))
    show(print_half, print_bf16)
    ramp = torch.ones(4096, dtype=torch.float16)
    show(ramp.sum(), ramp.cumsum(0)[-3:], ramp.sum(dtype=torch.float32))
    acc = torch.tensor(0.0, dtype=torch.float16)
    for _ in range(3000):
        acc = acc + torch.tensor(1.0, dtype=torch.float16)
    show(acc, torch.tensor(2048.0, dtype=torch.float16) + 1, torch.tensor(256.0, dtype=torch.bfloat16).add(1).float())
    show(torch.nextafter(torch.tensor([1.0]), torch.tensor([2.0])) - 1,
         torch.nextafter(torch.tensor([1.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64)))
    show(torch.tensor([1e-3, 5.0], dtype=torch.float16).exp(), torch.tensor([12.0], dtype=torch.float16).exp())
    show(torch.tensor([0.5, 11.0], dtype=torch.bfloat16).exp().float(), torch.tensor([2.0], dtype=torch.float16).sqrt())


def _tolerant_comparisons(lib, show):
    """Comparing floats the careful way: ``0.1 + 0.2 == 0.3`` in float32 and float64, eps-scaled tolerances,
    isclose/allclose with rtol/atol/equal_nan, infinities, mixed dtypes and integer inputs, and their refusals."""
    torch = lib
    a32 = torch.tensor(0.1) + torch.tensor(0.2)
    a64 = torch.tensor(0.1, dtype=torch.float64) + torch.tensor(0.2, dtype=torch.float64)
    show(a32 == 0.3, a64 == 0.3, (a64 - 0.3).abs(), (a64 - 0.3).abs() < torch.finfo(torch.float64).eps)
    show(a32.item() == 0.3, a32.item(), torch.tensor(0.3).item())
    x = torch.tensor([1.0, 1e-8, float("nan"), float("inf"), -float("inf"), 100.0])
    y = torch.tensor([1.0 + 1e-6, 0.0, float("nan"), float("inf"), float("inf"), 100.001])
    show(torch.isclose(x, y), torch.isclose(x, y, equal_nan=True), torch.isclose(x, y, rtol=0, atol=0))
    show(torch.isclose(x, y, rtol=1e-3), torch.isclose(x, y, atol=1e-7, rtol=0))
    show(torch.allclose(x[:2], y[:2]), torch.allclose(x, x), torch.allclose(x, x, equal_nan=True))
    show(torch.isclose(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])), torch.isclose(torch.tensor([1, 2]),
         torch.tensor([1, 3]), atol=1, rtol=0), torch.isclose(torch.tensor([True, False]), torch.tensor([True, True])))
    show_outcome(show, lambda: torch.isclose(torch.tensor([1.0]), torch.tensor([1.0], dtype=torch.float64)))
    show_outcome(show, lambda: torch.allclose(torch.tensor([1.0]), torch.tensor([1])))
    show_outcome(show, lambda: torch.isclose(torch.tensor([1.0]), torch.tensor([1.0]), rtol=-1.0))
    show_outcome(show, lambda: torch.isclose(torch.tensor([1.0]), torch.tensor([1.0]), atol=-1e-3))
    show_outcome(show, lambda: torch.allclose(torch.ones(2), torch.ones(3)))
    show(torch.isclose(torch.ones(2, 1), torch.ones(3)), torch.allclose(torch.ones(2, 1), torch.ones(1, 3)))
    h = torch.tensor([1.0, 1.001, 2.0], dtype=torch.float16)
    show(torch.isclose(h, torch.tensor([1.0, 1.0, 2.001], dtype=torch.float16)), torch.isclose(h, h + 1e-3))
    eps = torch.finfo(torch.float32).eps
    u = torch.tensor([1.0, 1.0 + eps, 1.0 + 2 * eps])
    show(u == 1.0, (u - 1.0).abs() <= 4 * eps, torch.equal(u, u.clone()), torch.equal(u, u.double()))
    nan = torch.tensor([float("nan")])
    show(nan == nan, nan != nan, torch.equal(nan, nan), torch.isnan(nan), nan.eq(nan).any(), torch.maximum(nan, u[:1]))
    show(torch.isclose(torch.tensor([1 + 1j]), torch.tensor([1 + 1.000001j])), torch.tensor(1e-40).item() > 0)
    show(torch.eq(torch.tensor([1, 2]), torch.tensor([1.0, 2.5])), torch.tensor([3]) == 3.0, torch.tensor([0.1]) == 0.1)


def _bfloat16_autocast_training(lib, show):
    """A small classifier trained on the CPU under ``autocast(bfloat16)``: which results come out in bfloat16,
    which in float32 (losses, softmax, sums), the parameters' and gradients' dtypes, nested autocast regions,
    a float16 CPU autocast and the autocast queries."""
    torch, nn, F = lib, lib.nn, lib.nn.functional
    torch.manual_seed(240)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(10, 8)
    target = torch.randint(0, 3, (10,))
    for step in range(3):
        opt.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            hidden = model[0](x)
            logits = model(x)
            probs = logits.softmax(-1)
            logp = F.log_softmax(logits, -1)
            loss = F.cross_entropy(logits, target)
            show(step, hidden.dtype, logits.dtype, probs.dtype, logp.dtype, loss.dtype, logits.grad_fn.name())
            show((logits + 1).dtype, (logits * x[:, :3]).dtype, logits.sum().dtype, logits.exp().dtype,
                 (x @ x.T).dtype, torch.mm(x, x.T).dtype, x.relu().dtype)
        loss.backward()
        show(round(loss.item(), 2), model[0].weight.dtype, model[0].weight.grad.dtype, model[2].bias.grad.dtype)
        opt.step()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        show(torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        with torch.autocast("cpu", enabled=False):
            show(model(x).dtype, torch.is_autocast_enabled("cpu"))
        inner = model(x.double())
        show(inner.dtype, model(x.half()).dtype, (x.double() @ x.double().T).dtype)
        idx = torch.tensor([1, 2])
        show((idx @ idx).dtype, torch.addmm(torch.zeros(10, 10), x, x.T).dtype, torch.bmm(x[None], x.T[None]).dtype)
    show(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
        show(out.dtype, F.mse_loss(out, torch.zeros_like(out)).dtype, torch.get_autocast_dtype("cpu"))
    with torch.autocast("cpu"):
        show(torch.get_autocast_dtype("cpu"), model(x).dtype)
    legacy = torch.cpu.amp.autocast(dtype=torch.bfloat16)
    show(type(legacy), isinstance(legacy, torch.autocast), type(torch.cpu.amp.GradScaler()))
    with legacy:
        show(model(x).dtype, torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        w = torch.randn(3, 4, requires_grad=True)
        v = torch.randn(4, 2, requires_grad=True)
        prod = (w @ v)
        prod.float().sum().backward()
    show(prod.dtype, prod.grad_fn.name(), w.grad.dtype, w.grad, v.grad)


def _custom_autocast_function(lib, show):
    """A user's Function with ``torch.amp.custom_fwd``/``custom_bwd`` (cast_inputs=float32) called inside and
    outside a bfloat16 autocast region, the state its backward sees, and a decorated helper."""
    torch = lib
    torch.manual_seed(241)
    seen: list = []

    class StableLogSumExp(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
        def forward(ctx, x):
            seen.append(("fwd", str(x.dtype), torch.is_autocast_enabled("cpu")))
            m = x.max(-1, keepdim=True).values
            out = m + (x - m).exp().sum(-1, keepdim=True).log()
            ctx.save_for_backward(x, out)
            return out

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            x, out = ctx.saved_tensors
            seen.append(("bwd", str(g.dtype), torch.is_autocast_enabled("cpu")))
            return g * (x - out).exp()

    x = torch.randn(4, 5, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        h = x @ torch.randn(5, 5)
        y = StableLogSumExp.apply(h)
        show(h.dtype, y.dtype, y.grad_fn.name())
    y.sum().backward()
    show(x.grad, x.grad.dtype)
    y2 = StableLogSumExp.apply(x.detach().double())
    show(y2.dtype, [tuple(s) for s in seen])

    class Plain(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            seen.append(("plain", str(a.dtype), torch.is_autocast_enabled("cpu")))
            return a * 2

        @staticmethod
        @torch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g * 2

    seen.clear()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = Plain.apply(torch.ones(2, requires_grad=True))
    show(out.dtype, seen)
    show_outcome(show, lambda: torch.amp.custom_fwd(lambda ctx, a: a, cast_inputs=torch.float32))


def _grad_scaler_cpu(lib, show):
    """A GradScaler on the CPU with two losses and two optimizers: scale of a list of outputs, unscale_ of one
    optimizer, an overflow skipping only a step, the growth and backoff bookkeeping, setters, and the misuse
    errors (unscale_ twice, unscale_ after step, step without backward, float16 gradients)."""
    torch, nn = lib, lib.nn
    torch.manual_seed(242)
    enc, head = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_enc = torch.optim.SGD(enc.parameters(), lr=0.05)
    opt_head = torch.optim.SGD(head.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 6, growth_factor=4.0, backoff_factor=0.25,
                                  growth_interval=2)
    show(scaler.get_scale(), scaler.get_growth_factor(), scaler.get_backoff_factor(), scaler.get_growth_interval(),
         scaler.is_enabled())
    for step in range(5):
        opt_enc.zero_grad()
        opt_head.zero_grad()
        x = torch.randn(6, 4)
        feats = enc(x)
        out = head(feats)
        loss_a = out.pow(2).mean()
        loss_b = feats.abs().mean() * (float("inf") if step == 2 else 1.0)
        scaled = scaler.scale([loss_a, loss_b])
        show(step, type(scaled).__name__, [round(s.item(), 3) for s in scaled])
        (scaled[0] + scaled[1]).backward()
        scaler.unscale_(opt_enc)
        show(enc.bias.grad.clone(), head.bias.grad.clone())
        scaler.step(opt_enc)
        scaler.step(opt_head)
        scaler.update()
        show(scaler.get_scale(), scaler._get_growth_tracker(), enc.bias.detach().clone(), head.bias.detach().clone())
    scaler.set_growth_factor(3.0)
    scaler.set_backoff_factor(0.5)
    scaler.update(16.0)
    show(scaler.get_scale(), scaler.state_dict())
    show_outcome(show, lambda: scaler.update(torch.tensor([1.0, 2.0])))
    show_outcome(show, lambda: scaler.update(torch.tensor(4, dtype=torch.int32)))
    scaled_tuple = scaler.scale((torch.tensor(1.0), {"k": torch.tensor(2.0)}))
    show(scaled_tuple if not isinstance(scaled_tuple, tuple) else type(scaled_tuple).__name__)
    opt_enc.zero_grad()
    scaler.scale(enc(torch.ones(1, 4)).sum()).backward()
    scaler.unscale_(opt_enc)
    show_outcome(show, lambda: scaler.unscale_(opt_enc))
    scaler.step(opt_enc)
    show_outcome(show, lambda: scaler.unscale_(opt_enc))
    scaler.update()
    show_outcome(show, lambda: scaler.step(opt_enc))
    half = nn.Linear(2, 1).half()
    opt_half = torch.optim.SGD(half.parameters(), lr=0.1)
    scaler.scale(half(torch.ones(1, 2, dtype=torch.float16)).sum()).backward()
    show(half.weight.grad.dtype)
    show_outcome(show, lambda: scaler.unscale_(opt_half))
    show_outcome(show, lambda: scaler.scale(3.0))
    show_outcome(show, lambda: torch.amp.GradScaler("cpu", growth_interval=0))


def _loss_scaling_by_hand(lib, show):
    """Loss scaling written by hand for a float16 model: small gradients underflow to zero without it, a scale
    keeps them, unscaling and the inf/NaN checks, a dynamic scale halved on overflow and doubled after good steps."""
    torch = lib
    torch.manual_seed(243)
    w = torch.randn(6, dtype=torch.float16).mul_(1e-3).requires_grad_()
    x = torch.randn(6, dtype=torch.float16) * 1e-3
    loss = (w * x).sum() * 1e-2
    loss.backward()
    show(loss, w.grad, (w.grad == 0).sum(), w.grad.dtype)
    w.grad = None
    scale = 2.0 ** 14
    (loss.detach() * 0 + (w * x).sum() * 1e-2 * scale).backward()
    show(w.grad, (w.grad == 0).sum(), w.grad.float() / scale, (w.grad / scale))
    show(torch.isfinite(w.grad).all(), torch.isinf(w.grad * 1e4).any(), (w.grad * 1e4).max())
    master = w.detach().float().clone()
    scale = 2.0 ** 10
    good = 0
    for step in range(6):
        w.grad = None
        boost = 1e5 if step == 2 else 1.0
        out = (w * x * boost).sum() * scale
        out.backward()
        g = w.grad.float() / scale
        finite = bool(torch.isfinite(g).all())
        if finite:
            master -= 0.1 * g
            with torch.no_grad():
                w.copy_(master)
            good += 1
            if good == 2:
                scale, good = scale * 2, 0
        else:
            scale, good = scale / 2, 0
        show(step, finite, scale, out.isinf().item(), master.clone(), w.detach().clone())
    show(torch.nan_to_num(torch.tensor([float("nan"), float("inf"), -float("inf")], dtype=torch.float16)),
         torch.nan_to_num(torch.tensor([float("inf")]), posinf=1.0))


def _kahan_and_cumsum_drift(lib, show):
    """Summing many float32 numbers: a left-to-right Python loop, torch.sum (pairwise), Kahan's compensated
    loop and float64; cumsum's drift against the exact running sums; mean/var of shifted data."""
    torch = lib
    torch.manual_seed(244)
    vals = torch.full((2000,), 0.1)
    show(vals.sum(), vals.double().sum(), vals.sum(dtype=torch.float64), vals.cumsum(0)[-1], vals.mean())
    naive = torch.tensor(0.0)
    total, comp = torch.tensor(0.0), torch.tensor(0.0)
    for v in vals[:500]:
        naive = naive + v
        yk = v - comp
        tk = total + yk
        comp = (tk - total) - yk
        total = tk
    show(naive, total, comp, vals[:500].sum(), vals[:500].double().sum().float())
    r = torch.rand(3000)
    cs = r.cumsum(0)
    exact = r.double().cumsum(0)
    drift = (cs.double() - exact).abs()
    show(cs[-1], exact[-1], drift.max(), drift.argmax(), cs[::1000])
    show(torch.cumsum(r, 0, dtype=torch.float64)[-1], r.sum(), r.double().sum(), r.sum(0, dtype=torch.float64))
    shifted = r + 1e4
    show(shifted.mean(), shifted.var(), (shifted - shifted.mean()).pow(2).mean())
    show(torch.logcumsumexp(r[:5], 0), r[:5].cumprod(0), torch.tensor([1e8, 1.0, -1e8]).sum(),
         torch.tensor([1e8, 1.0, -1e8]).double().sum())
    big = torch.ones(2 ** 25 // 1024 * 1024 // 512)
    show(big.sum(), torch.tensor([16777216.0]) + 1, torch.tensor([16777216.0], dtype=torch.float64) + 1)
    halves = torch.full((100,), 0.1, dtype=torch.float16)
    show(halves.sum(), halves.cumsum(0)[-1], halves.float().sum())


def _default_dtype_float64(lib, show):
    """``set_default_dtype(torch.float64)`` for a numerical notebook: factories, Python-float and complex
    literals, layers' parameters, what stays float32 or int64, the refusals, and restoring float32."""
    torch, nn = lib, lib.nn
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        torch.manual_seed(245)
        show(torch.get_default_dtype(), torch.tensor([1.0]).dtype, torch.tensor(1).dtype, torch.tensor(1j).dtype,
             torch.tensor([1, 2.5]).dtype, torch.tensor(True).dtype)
        show(torch.arange(0, 1, 0.25), torch.arange(3).dtype, torch.linspace(0, 1, 3), torch.zeros(2).dtype,
             torch.full((2,), 1.5).dtype, torch.full((2,), 7).dtype, torch.randn(2), torch.rand(2).dtype)
        show(torch.empty(0).dtype, torch.ones(2, dtype=torch.float32).dtype, torch.eye(2).dtype,
             torch.randint(0, 5, (2,)).dtype, torch.as_tensor([0.5]).dtype, torch.from_numpy(
                 torch.ones(2, dtype=torch.float32).numpy()).dtype)
        lin = nn.Linear(3, 2)
        show(lin.weight.dtype, lin.bias.dtype, lin(torch.ones(1, 3)).dtype, nn.BatchNorm1d(2).running_mean.dtype)
        f32 = torch.ones(2, dtype=torch.float32)
        show((f32 * 2.5).dtype, (f32 + torch.tensor(1.5)).dtype, (torch.tensor([1, 2]) * 0.5).dtype,
             (torch.tensor([1, 2]) / 2).dtype, torch.tensor([3]).float().dtype, torch.finfo().eps)
        show(torch.tensor(0.1) + torch.tensor(0.2) == 0.3, (torch.tensor([1, 2]) * 1j).dtype,
             torch.result_type(torch.tensor([1]), 1.0), torch.promote_types(torch.int32, torch.float16))
        show_outcome(show, lambda: lin(torch.ones(1, 3, dtype=torch.float32)))
        show_outcome(show, lambda: torch.set_default_dtype(torch.int64))
        show_outcome(show, lambda: torch.set_default_dtype(torch.complex128))
        torch.set_default_dtype(torch.float16)
        show(torch.tensor([0.1]).dtype, torch.arange(0.0, 1.0, 0.5).dtype, nn.Linear(1, 1).weight.dtype,
             torch.finfo())
        torch.set_default_dtype(torch.bfloat16)
        show(torch.tensor([0.1]).float(), torch.randn(2).dtype, torch.zeros(1).dtype)
    finally:
        torch.set_default_dtype(before)
    show(torch.get_default_dtype(), torch.tensor([1.0]).dtype, nn.Linear(1, 1).weight.dtype)


PROGRAMS = [
    _promotion_tables,
    _integer_division_signs,
    _overflow_and_wraparound,
    _conversions_and_truncation,
    _out_of_range_float_to_int,
    _half_and_bfloat16_rounding,
    _tolerant_comparisons,
    _bfloat16_autocast_training,
    _custom_autocast_function,
    _grad_scaler_cpu,
    _loss_scaling_by_hand,
    _kahan_and_cumsum_drift,
    _default_dtype_float64,
]

# The ones whose transcript holds a matrix product or MKL's float32 exp/log (not bit for bit) use a tolerance.
APPROXIMATE = {_bfloat16_autocast_training, _custom_autocast_function, _grad_scaler_cpu}


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__.lstrip("_"))
def test_user_program(program, one_thread):
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if program in APPROXIMATE else {"rtol": 0, "atol": 0}
    assert_same_transcript(program, **tolerance)
