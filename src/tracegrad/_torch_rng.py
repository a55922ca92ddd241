"""torch's CPU random stream, reimplemented on NumPy's MT19937 so that seeds give torch's numbers.

torch's CPU generator is mt19937 seeded by ``init_genrand`` with the seed's low 32 bits, which is NumPy's
``MT19937._legacy_seeding``; the distributions below follow ATen's ``DistributionsHelper.h``,
``TransformationHelper.h`` and ``cpu/DistributionTemplates.h`` (draw counts, order and arithmetic).
"""
from __future__ import annotations

import ctypes
import functools
import math
import operator
import struct
from collections.abc import Callable, Iterable

import numpy as np

from ._torch_rng_libm import libm

_MASK32 = 0xFFFFFFFF
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState): the legacy THGeneratorState plus the float normal cache
_MT_WORDS = 624  # mt19937's state words (MERSENNE_STATE_N)
_KEYS_AT = 24  # the 624 mt19937 words, each stored as a uint64, follow seed, left, seeded and next
_NORMAL_AT = _KEYS_AT + 624 * 8  # normal_x, normal_y, normal_rho (double), normal_is_valid (int)
_FLOAT_NORMAL_AT = 5048  # next_float_normal_sample (float), is_next_float_normal_sample_valid (bool)
_OPMATH = {np.dtype(np.float64): np.float64}  # every other float kernel computes in float (at::opmath_type)
_UNIT_SCALE = {np.float32: 2.0 ** -24, np.float64: 2.0 ** -53}
# std::numeric_limits<scalar_t>::digits of the floating dtypes, by NumPy name (bfloat16's is ml_dtypes')
FLOAT_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}


class TorchCPUStream:
    """The draws of one ``torch.Generator`` on the CPU."""

    def __init__(self, seed: int) -> None:
        self.bits = np.random.MT19937()
        self.reseed(seed)

    def reseed(self, seed: int) -> None:
        self.seed = int(seed) & ((1 << 64) - 1)
        self.bits._legacy_seeding(self.seed & _MASK32)
        self.fresh = True  # torch writes next=0 (not 624) into the state of an unused engine
        self.next_double_normal: float | None = None

    # ---- raw draws ----------------------------------------------------------------------------------------

    def raw32(self, n: int) -> np.ndarray:
        """``n`` successive ``generator->random()`` words, as uint64."""
        self.fresh = self.fresh and n == 0
        return self.bits.random_raw(n)  # (uint64 already)

    def raw64(self, n: int) -> np.ndarray:
        """``n`` successive ``generator->random64()``: the first 32-bit draw is the high half."""
        words = self.raw32(2 * n).reshape(n, 2)
        high = words[:, 0] << np.uint64(32)
        high |= words[:, 1]
        return high

    # ---- uniform ------------------------------------------------------------------------------------------

    def _numerators(self, n: int, opmath: type) -> np.ndarray:
        """The integers k of ``unit``'s k / 2**24 (int32, from random()) or k / 2**53 (int64, from random64())."""
        if opmath is np.float64:
            words = self.raw64(n)
            words &= np.uint64((1 << 53) - 1)
            return words.view(np.int64)  # (int64 converts to float faster than uint64)
        words = self.raw32(n).astype(np.uint32)  # narrow first: int32 converts to float fastest
        words &= np.uint32((1 << 24) - 1)
        return words.view(np.int32)

    def unit(self, n: int, opmath: type) -> np.ndarray:
        """``uniform_real_distribution<opmath>(0, 1)``: 24 bits of random() for float, 53 of random64() for double."""
        values = self._numerators(n, opmath).astype(opmath)
        values *= opmath(_UNIT_SCALE[opmath])
        return values

    def uniform(self, shape: tuple, np_dtype: np.dtype, low: float = 0.0, high: float = 1.0,
                fused: bool = True) -> np.ndarray:
        """``uniform_kernel``: x * (to - from) + from in opmath, cast, and a result rounded up to ``to`` -> ``from``.
        ``fused``: one rounding, as GCC contracts it in ATen/native/cpu; kernels outside that folder round twice."""
        np_dtype = np.dtype(np_dtype)
        if np_dtype.kind == "c":  # (PyTorch draws into the tensor viewed as real: real and imaginary parts in turn)
            return _as_complex(self.uniform(tuple(shape) + (2,), _real(np_dtype), low, high, fused), np_dtype)
        opmath = _OPMATH.get(np_dtype, np.float32)
        lo, hi = opmath(low), opmath(high)
        size = int(np.prod(shape, dtype=np.int64))
        if low == 0.0 and high == 1.0:  # x * 1 + 0: exact
            values = self.unit(size, opmath).astype(np_dtype, copy=False)
        elif fused and opmath is np.float32:
            # fma(k / 2**24, to - from, from): k * ((to - from) / 2**24) is that product, exact in double
            scale = float(hi - lo) * _UNIT_SCALE[np.float32]
            values = _fma32(self._numerators(size, opmath), scale, float(lo)).astype(np_dtype, copy=False)
        else:
            x = self.unit(size, opmath)
            values = (_fma(x, hi - lo, lo) if fused else x * (hi - lo) + lo).astype(np_dtype)
        if low != 0.0 or high != 1.0 or np_dtype.itemsize < 4:
            values[values == np_dtype.type(high)] = np_dtype.type(low)
        return values.reshape(shape)

    # ---- normal -------------------------------------------------------------------------------------------

    def normal(self, shape: tuple, np_dtype: np.dtype, mean: float = 0.0, std: float = 1.0,
               contiguous: bool = True) -> np.ndarray:
        """``normal_kernel``: 16-at-a-time Box-Muller for contiguous tensors of 16 or more, else scalar draws."""
        np_dtype = np.dtype(np_dtype)
        if np_dtype.kind == "c":  # (the tensor viewed as real, each part with std / sqrt(2): PyTorch's normal_)
            return _as_complex(self.normal(tuple(shape) + (2,), _real(np_dtype), mean, std / math.sqrt(2),
                                           contiguous), np_dtype)
        size = int(np.prod(shape, dtype=np.int64))
        if size >= 16 and contiguous:
            return self._normal_fill(size, np_dtype, mean, std).reshape(shape)
        standard = self.scalar_normal(size, mean, std)
        if np_dtype.itemsize < 4:  # static_cast<Half>(double) goes through float: two roundings
            standard = standard.astype(np.float32)
        return standard.astype(np_dtype).reshape(shape)

    def _normal_fill(self, size: int, np_dtype: np.dtype, mean: float, std: float) -> np.ndarray:
        """``normal_fill``: uniforms, Box-Muller per block of 16, the last 16 redrawn when size % 16 != 0."""
        opmath = _OPMATH.get(np_dtype, np.float32)
        blocks, rest = divmod(size, 16)
        # float and double draw one uniform per element; half and bfloat16 draw 16 per whole block only. The
        # tail's 16 follow in the stream, so one draw holds both (head, then the unused rest, then the tail).
        head = size if opmath is np_dtype.type else 16 * blocks
        draws = self.unit(head + (16 if rest else 0), opmath)
        if rest and head != 16 * blocks:
            draws = np.concatenate([draws[:16 * blocks], draws[head:]])
        normals = _fma(_box_muller_16(draws.reshape(-1, 16)).ravel(), std, mean)
        if rest:  # the tail's 16 overwrite the last 16 (an overlapping move, which NumPy buffers)
            normals[size - 16:size] = normals[16 * blocks:]
        return normals[:size].astype(np_dtype, copy=bool(rest))  # (a copy: no view holding the tail too)

    def scalar_normal(self, n: int, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """``normal_distribution<double>`` ``n`` times: each Box-Muller pair gives cos, and caches sin for the next."""
        cached = [] if self.next_double_normal is None else [self.next_double_normal]
        pairs = max(0, -(-(n - len(cached)) // 2))
        u = self.unit(2 * pairs, np.float64).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * libm(math.log1p, -u[:, 1]))
        theta = 2.0 * np.pi * u[:, 0]
        standard = np.empty(len(cached) + 2 * pairs)
        standard[:len(cached)] = cached
        drawn = standard[len(cached):].reshape(pairs, 2)
        np.multiply(radius, libm(math.cos, theta), out=drawn[:, 0])
        np.multiply(radius, libm(math.sin, theta), out=drawn[:, 1])
        self.next_double_normal = float(standard[n]) if len(standard) > n else None
        return _fma(standard[:n], std, mean)

    # ---- integers -----------------------------------------------------------------------------------------

    def random_from_to(self, n: int, low: int, high: int) -> np.ndarray:
        """``uniform_int_from_to``: (word % range) + from, the word being random64() when range >= 2**28."""
        span = int(high) - int(low)
        words = self.raw64(n) if span >= 1 << 28 else self.raw32(n)
        # in uint64, wrapping like C++'s unsigned sum, then read as int64: right for spans beyond int64 too
        return (_remainder(words, span) + np.uint64(int(low) & ((1 << 64) - 1))).view(np.int64)

    def random_full_range(self, n: int) -> np.ndarray:
        """``uniform_int_full_range``: random64() read as int64 (random_(int64 min, None))."""
        return self.raw64(n).view(np.int64)

    def random_default(self, n: int, np_dtype: np.dtype) -> np.ndarray:
        """``uniform_int`` (random_() with no bounds): [0, max] for integers, [0, 2**digits] for floats."""
        np_dtype = np.dtype(np_dtype)
        wide = np_dtype in (np.dtype(np.int64), np.dtype(np.float64))
        words = self.raw64(n) if wide else self.raw32(n)
        if np_dtype == np.bool_:
            return (words & np.uint64(1)).astype(np.bool_)
        if np_dtype.kind == "f" or np_dtype.name == "bfloat16":
            return _remainder(words, (1 << FLOAT_DIGITS[np_dtype.name]) + 1).astype(np_dtype)
        return _remainder(words, int(np.iinfo(np_dtype).max) + 1).astype(np_dtype)

    def randperm(self, n: int) -> np.ndarray:
        """``randperm_cpu``: Fisher-Yates with z = random() % (n - i), or the inside-out one for huge n."""
        if n < _MASK32 // 20:
            # (random() and n - i fit 32 bits: uint32 division is twice as fast as uint64's)
            picks = (self.raw32(max(n - 1, 0)).astype(np.uint32) % np.arange(n, 1, -1, dtype=np.uint32))
            picks = picks.astype(np.int64)
            picks += np.arange(len(picks), dtype=np.int64)
            return _swap_each(n, picks)
        result = np.empty(n, dtype=np.int64)
        for i, z in enumerate((self.raw64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()):
            result[i], result[z] = result[z], i
        return result

    # ---- other continuous distributions -------------------------------------------------------------------

    def exponential(self, n: int, lambd: float) -> np.ndarray:
        """``exponential_distribution<double>``: -1 / lambda * log1p(-u)."""
        return -1.0 / lambd * libm(math.log1p, -self.unit(n, np.float64))

    def geometric(self, n: int, p: float) -> np.ndarray:
        """``geometric_distribution<double>``: ceil(log(u) / log1p(-p))."""
        return np.ceil(libm(math.log, self.unit(n, np.float64)) / math.log1p(-p))

    def cauchy(self, n: int, median: float, sigma: float) -> np.ndarray:
        """``cauchy_distribution<double>``: median + sigma * tan(pi * (u - 0.5))."""
        return median + sigma * libm(math.tan, np.pi * (self.unit(n, np.float64) - 0.5))

    def log_normal(self, n: int, mean: float, std: float) -> np.ndarray:
        """``lognormal_distribution<double>``: exp of the scalar (cached) normal."""
        return libm(math.exp, self.scalar_normal(n, mean, std))

    def bernoulli(self, p: np.ndarray, double: bool) -> np.ndarray:
        """``bernoulli_distribution``: u < p, u a double (double p) or float uniform, one per element."""
        p = np.asarray(p)
        return self.unit(p.size, np.float64 if double else np.float32).reshape(p.shape) < p

    # ---- rejection samplers (ATen/native/Distributions.{h,cpp}: one element after another, draws on demand) ---

    def standard_gamma(self, alpha: np.ndarray, single: bool) -> np.ndarray:
        """``_s_gamma_cpu``: ``sample_gamma`` per element in C order, float arithmetic on alpha when ``single``
        (float32 input), then max(smallest normal, sample). Returns float64 values exact in the input dtype."""
        flat = np.ascontiguousarray(alpha, dtype=np.float64).ravel()
        rows = _gamma_rows(flat, single)
        with _UniformTape(self, 3 * flat.size) as tape:
            if _all_equal(flat) and flat[0] >= 1:  # e.g. Gamma(2.0, 1.0).sample((n,)): in bulk
                draws = np.array(_gamma_run(tape, next(rows), flat.size), dtype=np.float64)
            else:
                draws = np.array(tape.each(_sample_gamma, rows), dtype=np.float64)
        if single:  # the sampler returns scale * d * v in double; C casts it to float on return
            with np.errstate(over="ignore"):
                draws = draws.astype(np.float32).astype(np.float64)
        tiny = np.finfo(np.float32 if single else np.float64).tiny
        return np.where(draws > tiny, draws, tiny).reshape(np.shape(alpha))  # std::max(tiny, NaN) is tiny

    def poisson(self, rates: np.ndarray) -> np.ndarray:
        """``_s_poisson_cpu``: ``sample_poisson(double(rate))`` per element in C order, as int64."""
        flat = np.ascontiguousarray(rates, dtype=np.float64).ravel()
        bulk = _all_equal(flat) and 0 < flat[0] < _INF  # e.g. Poisson(5.0).sample((n,)): in bulk
        rows = _poisson_rows(flat[:1] if bulk else flat)
        expected = np.where(flat < 10, flat + 1, 3).sum()  # uniforms: about rate + 1 below 10, 2 or 3 for PTRS
        with _UniformTape(self, int(expected * 1.05) + 16) as tape:
            draws = _poisson_run(tape, next(iter(rows)), flat.size) if bulk else tape.each(_sample_poisson, rows)
        return np.array(draws, dtype=np.int64).reshape(np.shape(rates))

    def binomial(self, count: np.ndarray, prob: np.ndarray, single: bool) -> np.ndarray:
        """``_s_binomial_cpu``: ``sample_binomial`` per element in C order (count's float type, double uniforms)."""
        count, prob = np.broadcast_arrays(np.asarray(count, dtype=np.float64), np.asarray(prob, dtype=np.float64))
        plan = _binomial_plan_single if single else _binomial_plan
        keys = list(zip(count.ravel().tolist(), prob.ravel().tolist()))
        shared = plan(keys[0]) if _all_equal(count) and _all_equal(prob) else None  # e.g. Binomial(10, 0.3)
        with _UniformTape(self, 4 * count.size) as tape:
            if shared is not None and shared[1] is _binomial_inversion:  # the inversion as one pass
                flip, _, log_q, scalar = shared
                total = keys[0][0]
                draws = tape.geometric_counts(total, log_q, len(keys))
                draws = [scalar(total - k) for k in draws] if flip else draws
            else:
                draws = tape.each(_sample_binomial, _memo_rows(plan, keys))
        return np.array(draws, dtype=np.float64).reshape(count.shape)

    # ---- state (torch's 5056-byte CPUGeneratorImplState) ---------------------------------------------------

    def get_state(self) -> np.ndarray:
        state = self.bits.state["state"]
        pos = int(state["pos"])
        buffer = bytearray(_STATE_BYTES)
        struct.pack_into("<QiiQ", buffer, 0, self.seed, 625 - pos, 1, 0 if self.fresh else pos)
        buffer[_KEYS_AT:_NORMAL_AT] = np.asarray(state["key"], dtype="<u8").tobytes()
        cached = self.next_double_normal
        struct.pack_into("<dddi", buffer, _NORMAL_AT, 0.0, cached or 0.0, 0.0, int(cached is not None))
        return np.frombuffer(bytes(buffer), dtype=np.uint8).copy()

    def set_state(self, data: np.ndarray) -> None:
        raw = bytes(np.asarray(data, dtype=np.uint8))
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {len(raw)}")
        seed, left, seeded, next_ = struct.unpack_from("<QiiQ", raw, 0)
        # (torch's mt19937::is_valid on the restored engine, before anything is set: ``next`` read as a uint32)
        if not (seeded and 0 < left <= _MT_WORDS and next_ & 0xFFFFFFFF <= _MT_WORDS):
            raise RuntimeError("Invalid mt19937 state")
        key = np.frombuffer(raw, dtype="<u8", count=_MT_WORDS, offset=_KEYS_AT).astype(np.uint32)
        _, cached, _, valid = struct.unpack_from("<dddi", raw, _NORMAL_AT)
        self.seed = seed
        self.bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 625 - left}}
        self.fresh = next_ == 0
        self.next_double_normal = cached if valid else None


def _remainder(words: np.ndarray, divisor: int) -> np.ndarray:
    """words % divisor for uint64 words and one divisor, as w - (w // d) * d: NumPy divides by a scalar with
    libdivide's multiplications, several times faster than its ``%``."""
    divisor = np.uint64(divisor)
    quotient = words // divisor
    quotient *= divisor
    return words - quotient


def _all_equal(values: np.ndarray) -> bool:
    """Whether ``values`` is one value (not NaN) repeated, at least once."""
    flat = values.ravel()
    return bool(flat.size) and bool((flat == flat[0]).all())


def _swap_each(n: int, picks: np.ndarray) -> np.ndarray:
    """0..n-1 after the sequential swaps r[i] <-> r[picks[i]] (picks[i] >= i), i = 0, 1, ..."""
    if n < _SWAP_LOOP_BELOW:
        result = list(range(n))
        for i, z in enumerate(picks.tolist()):
            result[i], result[z] = result[z], result[i]
        return np.array(result, dtype=np.int64)
    return _swaps_at_once(n, picks)


_SWAP_LOOP_BELOW = 128  # a Python loop beats the vectorised version's fixed cost on short permutations


def _swaps_at_once(n: int, picks: np.ndarray) -> np.ndarray:
    """``_swap_each`` without its loop. Step i fixes slot i for good: r[i] takes the value then at picks[i], and
    that slot the value then at i. A slot p >= i was last written by the last earlier step j aiming at p, with
    the value w_j that slot j held when step j began; so r[i] = w_j (or p itself if no step aimed at p yet), and
    w_i = w_k for the last earlier step k aiming at i (or i): chains through earlier steps, followed by pointer
    jumping (they are short: a few rounds)."""
    steps = np.arange(n, dtype=np.intp)
    targets = np.append(picks, n - 1).astype(np.intp, copy=False)  # the last slot: a step swapping it with itself
    earlier_same, last_at = _previous_and_last_hits(targets, steps)
    feeder = np.where(last_at == steps, earlier_same, last_at)  # (a step aiming at itself feeds no one before)
    root = np.where(feeder < 0, steps, feeder)
    while True:
        jumped = root[root]
        if np.array_equal(jumped, root):
            break
        root = jumped
    return np.where(earlier_same < 0, targets, root[earlier_same]).astype(np.int64, copy=False)


def _previous_and_last_hits(targets: np.ndarray, steps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per step, the previous step with the same target (-1 if none); per slot, the last step aiming at it (-1)."""
    n = len(targets)
    keys = targets << 32  # (target, step) in one int64 (both below 2**32): one plain sort orders them
    keys |= steps
    keys.sort()
    by_target = keys >> 32
    order = keys & 0xFFFFFFFF
    new_target = by_target[1:] != by_target[:-1]
    repeats = np.flatnonzero(~new_target)
    earlier_same = np.full(n, -1, dtype=np.intp)
    earlier_same[order[repeats + 1]] = order[repeats]
    group_ends = np.append(np.flatnonzero(new_target), n - 1)
    last_at = np.full(n, -1, dtype=np.intp)
    last_at[by_target[group_ends]] = order[group_ends]
    return earlier_same, last_at


def _fma32(a: np.ndarray, b, c, *, kernel: bool = False) -> np.ndarray:
    """float32 fma(a, b, c) for ``a`` and ``b`` whose float64 product is exact (floats, or a float and an integer
    of 24 bits or fewer): only the sum rounds, in float64 and then float32, which is fma's single rounding except
    where an inexact float64 sum lands on a float32 midpoint; ``_round_midpoints_once`` redoes those. ``kernel``:
    inside ``_log_ps`` and ``_sincos_ps``, where that never happens (all 2**24 float uniforms were tried)."""
    total = a.astype(np.float64)  # (in place from here: large temporaries are slow to allocate)
    total *= b if np.ndim(b) == 0 or b.dtype == np.float64 else b.astype(np.float64)
    total += c
    result = total.astype(np.float32)
    if not kernel:
        _round_midpoints_once(result, total, a, b, c)
    return result


def _round_midpoints_once(result: np.ndarray, total: np.ndarray, a: np.ndarray, b, c) -> None:
    """Fix ``result`` (float32 of ``total``, the float64 sum a * b + c) where that sum lands on a float32 midpoint
    (the 29 bits float32 drops are 1000...) without being exact: one float64 step towards the exact sum (TwoSum's
    error) makes float32's rounding fma's. Such sums are rare, so only they are recomputed; ``total`` is spent."""
    low = total.reshape(-1).view(np.uint64)
    low &= np.uint64(0x1FFFFFFF)
    midpoint = low == np.uint64(0x10000000)
    if not midpoint.any():
        return
    at = np.flatnonzero(midpoint)
    p = np.broadcast_to(a, total.shape).reshape(-1)[at].astype(np.float64)
    p *= np.broadcast_to(b, total.shape).reshape(-1)[at]
    c = np.broadcast_to(c, total.shape).reshape(-1)[at].astype(np.float64)
    s = p + c
    back = s - p
    error = (p - (s - back)) + (c - back)  # TwoSum: the exact sum is s + error
    s = np.where(error == 0, s, np.nextafter(s, np.copysign(np.inf, error)))
    result.reshape(-1)[at] = s.astype(np.float32)


_SPLIT_SAFE = 2.0 ** 990  # below it, b * (2**27 + 1) stays finite
_TINY_SCALE = 2.0 ** -64


def _fma(a: np.ndarray, b, c) -> np.ndarray:
    """fma(a, b, c) as torch's compiled kernels do it (they fuse x * scale + shift into one rounding)."""
    if c == 0:  # a * b rounds once; adding the zero still matters: -0.0 + 0.0 is +0.0
        if b == 1:
            return a + a.dtype.type(c)
        out = a * a.dtype.type(b)
        out += a.dtype.type(c)
        return out
    if a.dtype != np.float64:  # float kernels hold mean, std, from and to as floats
        return _fma32(a, np.float32(b), np.float32(c)).astype(a.dtype, copy=False)
    b = np.float64(b)
    if not (np.isfinite(b) and np.isfinite(c)):  # (an infinite or NaN scale or shift decides the result alone)
        return a * b + np.float64(c)
    if abs(b) > _SPLIT_SAFE or abs(c) > _SPLIT_SAFE:
        # (Dekker's split of b overflows near the double's range: scaling by a power of two is exact)
        return _fma(a, b * _TINY_SCALE, np.float64(c) * _TINY_SCALE) / _TINY_SCALE
    # error-free TwoProduct (Dekker) and TwoSum, then one final rounding: fma's result in practice
    product = a * b
    low = _two_product_error(a, b, product)
    total = product + c
    back = total - product
    carry = (product - (total - back)) + (c - back)
    return total + (carry + low)


def _two_product_error(a: np.ndarray, b: np.float64, p: np.ndarray) -> np.ndarray:
    split = 134217729.0  # 2**27 + 1
    a_hi = a * split - (a * split - a)
    b_hi = b * split - (b * split - b)
    a_lo, b_lo = a - a_hi, b - b_hi
    return ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo


def _box_muller_16(blocks: np.ndarray) -> np.ndarray:
    """``NormalFill16`` on rows of 16 uniforms: u1 = 1 - row[j], u2 = row[j + 8] give row[j] (radius * cos) and
    row[j + 8] (radius * sin), standard normals; the caller applies std and mean."""
    halves = blocks.reshape(-1, 2, 8)
    u1 = 1 - halves[:, 0]
    if blocks.dtype == np.float32:
        # the AVX2 kernel: Cephes log and sincos (avx_mathfun.h) in float32, op for op
        radius = _log_ps(u1)
        radius *= np.float32(-2.0)
        sin, cos = _sincos_ps(halves[:, 1] * np.float32(2.0 * np.pi))
    else:
        radius = -2 * libm(math.log, u1)
        theta = (2.0 * np.pi) * halves[:, 1]
        sin, cos = libm(math.sin, theta), libm(math.cos, theta)
    np.sqrt(radius, out=radius)
    out = np.empty_like(halves)
    np.multiply(radius, cos, out=out[:, 0])
    np.multiply(radius, sin, out=out[:, 1])
    return out.reshape(blocks.shape)


_F = np.float32


def _f32(values) -> tuple[float, ...]:
    """Float constants, held as the doubles they equal (so float64 arithmetic on them is exact)."""
    return tuple(float(np.float32(v)) for v in values)


_LOG_P = _f32((7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
               -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_COS_P = _f32((2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002))
_SIN_P = _f32((-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1))
_SQRT_HALF = _F(0.707106781186547524)


def _horner32(x64: np.ndarray, coefficients: tuple[float, ...]) -> np.ndarray:
    """y = c0, then y = fma(y, x, c) in float for each next c: ``x64`` holds floats, so each product is exact in
    double and only the sums round (double, then float, as ``_fma32``). Returns float32."""
    total = x64 * coefficients[0]
    total += coefficients[1]
    y = np.empty(total.shape, np.float32)
    for coefficient in coefficients[2:]:
        np.copyto(y, total, casting="unsafe")  # round to float (the fastest way back and forth: copies)
        np.copyto(total, y)
        total *= x64
        total += coefficient
    return total.astype(np.float32)


def _log_ps(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` for positive normal floats: its operations, with the fma contractions GCC makes.
    Where an fma's product is exact in float (a small integer times a short constant, or a halving), a float
    multiply-add gives the same single rounding, and runs in float32."""
    x, exponent = np.frexp(x)  # x in [0.5, 1): the kernel's mantissa; frexp's exponent is its e + 1
    small = x < _SQRT_HALF
    exponent -= small
    e = exponent.astype(np.float32)
    mantissa = x
    x = mantissa - _F(1)
    x += mantissa * small  # (x - 1) + x where small: both exact (Sterbenz); masks, as np.where is slow here
    z = x * x
    y = _horner32(x.astype(np.float64), _LOG_P)
    y *= x
    y = _fma32(y, z, e * _F(-2.12194440e-4), kernel=True)
    y -= z * _F(0.5)  # fma(-z, 0.5, y)
    y += x
    y += e * _F(0.693359375)  # fma(e, 0.693359375, x + y)
    return y


def _sincos_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps`` for x >= 0: (sin, cos), its operations and GCC's fma contractions (run in
    float32 where the product is exact, as in ``_log_ps``)."""
    j = (x * _F(1.27323954473516)).astype(np.int32)
    j += 1
    j &= ~1
    y = j.astype(np.float32)  # 0 to 8
    x = x + y * _F(-0.78515625)  # fma(y, DP1, x), DP1 and DP2 having 8 and 11 bits
    x += y * _F(-2.4187564849853515625e-4)
    x = _fma32(y, _F(-3.77489497744594108e-8), x, kernel=True)
    z = x * x
    z64 = z.astype(np.float64)
    half_z = z * _F(0.5)
    cos_poly = _horner32(z64, _COS_P)
    cos_poly *= z
    cos_poly = _fma32(cos_poly, z64, np.negative(half_z, out=half_z), kernel=True)
    cos_poly += _F(1)
    sin_poly = _horner32(z64, _SIN_P)
    sin_poly *= z
    sin_poly = _fma32(sin_poly, x, x, kernel=True)
    # the kernel's blend and sign flips, on the bits (np.where and masked ufuncs are slow on random masks)
    sin, cos = sin_poly.view(np.int32), cos_poly.view(np.int32)
    swap = j << 30  # bit 1 of j to the sign bit, then to all 32 bits
    swap >>= 31
    swap &= sin ^ cos
    sin ^= swap
    cos ^= swap
    sin ^= (j & 4) << 29
    cos ^= ((j + 2) & 4) << 29  # (j - 2) & 4 == 0: j - 2 and j + 2 differ by 4, so only in that bit
    sin, cos = sin.view(np.float32), cos.view(np.float32)
    return sin, cos


# ---- rejection samplers ---------------------------------------------------------------------------------------
# Per-element loops in Python floats: each element's draws follow the previous element's, and how many it takes
# is known only once it is accepted. ``math`` calls the C library like ATen does (NumPy's SIMD log, exp... differ
# in the last bit); the wrappers give C's results where ``math`` would raise instead.

_LIBM = ctypes.CDLL("libm.so.6")
for _name, _type in (("lgamma", ctypes.c_double), ("log1pf", ctypes.c_float)):
    getattr(_LIBM, _name).restype = _type
    getattr(_LIBM, _name).argtypes = [_type]
_INF = math.inf
_THIRD_F = float(np.float32(1.0) / np.float32(3.0))  # ATen writes 1.0f / 3.0f: a float constant


_MT_STATE_BYTES = 624 * 4 + 4  # NumPy's mt19937_state: uint32_t key[624], int pos


def _raw_state_matches() -> bool:
    """Whether NumPy's MT19937 state struct is laid out as ``_MT_STATE_BYTES`` says (checked once), so that a
    snapshot can be a 2.5 kB copy (0.4 us) rather than ``bits.state``'s dictionary (about 30 us each way)."""
    bits = np.random.MT19937()
    bits._legacy_seeding(1)
    bits.random_raw(7)
    try:
        raw = ctypes.string_at(bits.ctypes.state_address, _MT_STATE_BYTES)
    except AttributeError:  # (no ctypes interface: keep the dictionary)
        return False
    state = bits.state["state"]
    return (np.array_equal(np.frombuffer(raw, "<u4", 624), state["key"])
            and int.from_bytes(raw[-4:], "little", signed=True) == state["pos"])


_RAW_STATE = _raw_state_matches()


def _snapshot(bits: np.random.MT19937) -> object:
    if _RAW_STATE:
        return ctypes.string_at(bits.ctypes.state_address, _MT_STATE_BYTES)
    return bits.state


def _restore(bits: np.random.MT19937, snapshot: object) -> None:
    if _RAW_STATE:
        ctypes.memmove(bits.ctypes.state_address, snapshot, _MT_STATE_BYTES)
    else:
        bits.state = snapshot


_FIRST_WINDOW = 256  # uniforms first listed for ``_UniformTape.each``


class _UniformTape:
    """``uniform_real_distribution<double>(0, 1)`` draws for a rejection loop: read ahead in bulk, and on leaving
    the generator is set just after the last one used, as if each had been drawn on demand. ``used`` counts the
    uniforms used so far, ``cached`` is the cached normal at that point."""

    def __init__(self, stream: TorchCPUStream, expected: int) -> None:
        self.stream = stream
        self.start = _snapshot(stream.bits)
        self.fresh = stream.fresh
        self.cached = stream.next_double_normal  # normal_distribution<double>'s sine, shared with other ops
        self.chunk = max(int(expected), 64)
        self.read = np.empty(0)  # every uniform read so far
        self.used = 0

    def __enter__(self) -> _UniformTape:
        return self

    def _read(self) -> np.ndarray:
        values = self.stream.unit(self.chunk, np.float64)
        self.chunk *= 2
        return values

    def uniforms(self, start: int, count: int) -> np.ndarray:
        """Uniforms ``start`` to ``start + count``, reading more as needed (each read twice the last)."""
        while len(self.read) < start + count:
            self.read = np.concatenate([self.read, self._read()])
        return self.read[start:start + count]

    def _listed(self, start: int, at_least: int) -> list[float]:
        """Uniforms from ``start`` as a list: ``at_least`` of them, or up to twice that where already read."""
        count = max(at_least, min(len(self.read) - start, 2 * at_least))
        return self.uniforms(start, count).tolist()

    def each(self, sample: Callable, rows: Iterable) -> list:
        """``sample(row, u, normal)`` for each row in turn: ``u()`` gives the next uniform, ``normal`` is a
        one-item list holding the cached normal (or None). An element that runs past the read-ahead starts over
        on a longer tape: its draws are the same ones, so only the work is repeated. The tape listed for the rows
        is a window of the read-ahead that doubles as they need (listing all of it for one row, each time, made
        the bulk samplers' occasional scalar element cost as much as the whole rest)."""
        base = self.used  # the position of tape[0]
        tape = self._listed(base, _FIRST_WINDOW)
        ahead = iter(tape)
        u = ahead.__next__  # a bound C method: the cheapest call per draw
        left = operator.length_hint
        normal = [self.cached]
        out = []
        append = out.append
        for row in rows:
            unused, cached = left(ahead), normal[0]
            while True:
                try:
                    append(sample(row, u, normal))
                    break
                except StopIteration:
                    start = base + len(tape) - unused
                    tape = self._listed(start, 2 * len(tape) + 1)
                    base, ahead, normal[0] = start, iter(tape), cached
                    u, unused = ahead.__next__, len(tape)
        self.used = base + len(tape) - left(ahead)
        self.cached = normal[0]
        return out

    def geometric_counts(self, count: float, log_q: float, n: int) -> list[float]:
        """``_binomial_inversion`` ``n`` times over, for one count and log(1 - p): the waits ceil(log(u) / log_q)
        of a piece of the tape at once, then one pass that sums them and cuts them into elements."""
        out: list[float] = []
        total = successes = 0.0
        while len(out) < n:
            uniforms = self.uniforms(self.used, 1024)  # (pieces: logs of uniforms left unused are wasted work)
            with np.errstate(divide="ignore"):  # log(0) = -inf: an infinite wait
                waits = np.ceil(_libm_where(math.log, uniforms, uniforms > 0, -_INF) / log_q).tolist()
            used = self.used
            for wait in waits:
                used += 1
                total += wait
                if total <= count:
                    successes += 1
                    continue
                out.append(successes)
                total = successes = 0.0
                if len(out) == n:
                    break
            self.used = used
        return out

    def __exit__(self, *exc) -> None:
        _restore(self.stream.bits, self.start)
        self.stream.raw32(2 * self.used)  # random64() per double uniform
        self.stream.fresh = self.fresh and self.used == 0
        self.stream.next_double_normal = self.cached


def _memo_rows(plan: Callable, keys: list) -> list:
    """``(key, plan(key))`` per key, each distinct key planned once (a distribution often repeats its parameters)."""
    plans: dict = {}
    rows = []
    for key in keys:
        found = plans.get(key)
        if found is None:
            found = plans[key] = plan(key)
        rows.append((key, found))
    return rows


_FLOAT32 = struct.Struct("<f")


def _single(x: float) -> float:
    """A float operation's result: the double result of float operands rounded once (exact for + - * / sqrt)."""
    try:
        return _FLOAT32.unpack(_FLOAT32.pack(x))[0]
    except OverflowError:  # C's (float) cast: beyond FLT_MAX is infinite
        return math.copysign(_INF, x)


def _log(x: float) -> float:
    return math.log(x) if x > 0 else (-_INF if x == 0 else math.nan)


def _pow(x: float, y: float) -> float:
    try:
        return math.pow(x, y)
    except OverflowError:
        return _INF
    except ValueError:
        return math.nan


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _gamma_rows(alpha: np.ndarray, single: bool) -> Iterable[tuple[float, float, float, float]]:
    """Per element (alpha, exponent, d, c) of ``sample_gamma``: below 1, alpha is boosted by one and the sample
    scaled by u ** exponent (1 / alpha); d = alpha - 1/3 and c = 1 / sqrt(9 d). Arithmetic on alpha itself is
    in scalar_t (float when ``single``, as float32 NumPy does it), the rest in double (IEEE ops: NumPy's match C's)."""
    scalar = np.float32 if single else np.float64
    a = alpha.astype(scalar)
    boost = a < 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        exponent = np.where(boost, scalar(1) / a, 0.0).astype(np.float64)
        d = (np.where(boost, a + scalar(1), a) - scalar(_THIRD_F)).astype(np.float64)
        c = 1.0 / np.sqrt(9.0 * d)  # sqrt(0) gives inf, of a negative NaN: C's results
    return zip(alpha.tolist(), exponent.tolist(), d.tolist(), c.tolist())


def _sample_gamma(row: tuple[float, float, float, float], u: Callable[[], float], normal: list) -> float:
    """``sample_gamma<scalar_t, double>``: Marsaglia-Tsang on ``_gamma_rows``' constants; returns scale * d * v
    in double (the caller rounds it to scalar_t). Normals are ``normal_distribution<double>``'s: the cached
    sine, else Box-Muller on two uniforms, caching the sine."""
    alpha, exponent, d, c = row
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale = _pow(1 - u(), exponent)
    while True:
        y = 0.0
        while y <= 0:
            x = normal[0]
            if x is None:
                u1, u2 = u(), u()
                radius = math.sqrt(-2.0 * math.log1p(-u2))
                theta = _TWO_PI * u1
                normal[0] = radius * math.sin(theta)
                x = radius * math.cos(theta)
            else:
                normal[0] = None
            y = 1.0 + c * x
        v = y * y * y
        uniform = 1 - u()
        xx = x * x
        if uniform < 1.0 - 0.033100001513957977 * xx * xx:  # 0.0331f
            return scale * d * v
        if math.log(uniform) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scale * d * v


_TWO_PI = 2.0 * math.pi


def _gamma_run(tape: _UniformTape, row: tuple[float, float, float, float], n: int) -> list[float]:
    """``_sample_gamma`` ``n`` times over for one alpha >= 1, in bulk. Then every try draws a normal and a uniform,
    so the tape is a fixed pattern whatever the element boundaries: (the cached normal, a uniform), then per
    four uniforms u1 u2 t t' the tries (cos of the pair, t) and (its sine, t'). A try with y <= 0 (which draws
    another normal) breaks the pattern: from there one element goes the scalar way, then the bulk resumes."""
    _, _, d, c = row
    out: list[float] = []
    while len(out) < n:
        need = n - len(out)
        lead = int(tape.cached is not None)
        # (acceptance is over 95%; pieces are capped as an irregular try discards the rest of its piece)
        pairs = min(need // 2 + need // 16 + 8, _GAMMA_PIECE_PAIRS)
        drawn = tape.uniforms(tape.used, lead + 4 * pairs)
        x, t = _gamma_tries(drawn, tape.cached, pairs)
        y = 1.0 + c * x
        v = y * y * y
        accepted = _gamma_accepts(x, v, 1 - t, d)
        irregular = np.flatnonzero(y <= 0)
        tries = np.flatnonzero(accepted[:irregular[0] if len(irregular) else len(x)])[:need]
        out += (d * v[tries]).tolist()  # scale * d * v, with scale 1
        if len(tries):  # up to the end of the last try taken: its uniform, and the sine of its pair if unused
            pair, second = divmod(int(tries[-1]) - lead, 2)
            tape.used += 1 if pair < 0 else lead + 4 * pair + 3 + second
            tape.cached = None if pair < 0 or second else float(x[tries[-1] + 1])
        if len(out) < n:  # an irregular try, or too many rejections: one element the scalar way
            out += tape.each(_sample_gamma, [row])
    return out


_GAMMA_PIECE_PAIRS = 1024  # alpha = 1 has an irregular try (y <= 0) in about 150


def _gamma_tries(drawn: np.ndarray, cached: float | None, pairs: int) -> tuple[np.ndarray, np.ndarray]:
    """The tries' normals x and uniforms t on ``drawn`` (see ``_gamma_run``), Box-Muller as in ``_sample_gamma``."""
    lead = int(cached is not None)
    quads = drawn[lead:].reshape(pairs, 4)
    radius = np.sqrt(-2.0 * libm(math.log1p, -quads[:, 1]))
    theta = _TWO_PI * quads[:, 0]
    x = np.empty((pairs, 2))
    np.multiply(radius, libm(math.cos, theta), out=x[:, 0])
    np.multiply(radius, libm(math.sin, theta), out=x[:, 1])
    if not lead:
        return x.ravel(), quads[:, 2:].ravel()
    return np.concatenate([[cached], x.ravel()]), np.concatenate([drawn[:1], quads[:, 2:].ravel()])


def _gamma_accepts(x: np.ndarray, v: np.ndarray, uniform: np.ndarray, d: float) -> np.ndarray:
    """Marsaglia-Tsang's two tests, as ``_sample_gamma`` writes them (logs through the C library, and only
    where the squeeze fails)."""
    xx = x * x
    accepted = uniform < 1.0 - 0.033100001513957977 * xx * xx
    rest = np.flatnonzero(~accepted)
    log_v = _libm_where(math.log, v[rest], v[rest] > 0, -_INF)  # (v <= 0 only where y <= 0: tries not taken)
    accepted[rest] = libm(math.log, uniform[rest]) < 0.5 * xx[rest] + d * (1.0 - v[rest] + log_v)
    return accepted


def _libm_where(fn: Callable[[float], float], values: np.ndarray, where: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """``fn`` through the C library on the elements ``where`` says, ``fill`` elsewhere (where it may be undefined)."""
    if where.all():
        return libm(fn, values)
    out = np.full(values.shape, fill)
    out[where] = libm(fn, values[where])
    return out


def _poisson_rows(rate: np.ndarray) -> Iterable[tuple[float, float | tuple[float, ...]]]:
    """Per element (rate, constants) of ``sample_poisson``: exp(-rate) below 10, else PTRS's (log rate, b, a,
    log(1 / alpha), v_r). NumPy's + - * / sqrt round as C's do; log and exp go through the C library."""
    ptrs = rate >= 10
    constants = _libm_where(math.exp, -rate, ~ptrs).tolist()
    r = rate[ptrs]
    b = 0.931 + 2.53 * np.sqrt(r)
    columns = (libm(math.log, r), b, -0.059 + 0.02483 * b, libm(math.log, 1.1239 + 1.1328 / (b - 3.4)),
               0.9277 - 3.6224 / (b - 2))
    for at, values in zip(np.flatnonzero(ptrs).tolist(), zip(*(column.tolist() for column in columns))):
        constants[at] = values
    return zip(rate.tolist(), constants)


def _poisson_run(tape: _UniformTape, row: tuple[float, float | tuple[float, ...]], n: int) -> list[int]:
    """``_sample_poisson`` ``n`` times over for one positive, finite rate, in bulk."""
    rate, constants = row
    if rate >= 10:
        return _ptrs_run(tape, rate, constants, n)
    return _product_run(tape, constants, rate, n)


def _product_run(tape: _UniformTape, threshold: float, rate: float, n: int) -> list[int]:
    """The multiplying sampler ``n`` times over for one threshold exp(-rate): how many uniforms an element takes
    depends only on where on the tape it starts, so that is found for every position of a piece of the tape at
    once (``_product_lengths``); the elements then hop through it, each starting where the last one stopped.
    An element longer than the lengths looked for, or running past the piece, goes the scalar way."""
    out: list[int] = []
    longest = int(rate + 4 * math.sqrt(rate)) + 6  # (not one element in 10**5 takes more)
    while len(out) < n:
        span = min(int((n - len(out)) * (rate + 1) * 1.02) + longest + 32, _PRODUCT_PIECE)
        takes = _product_lengths(tape.uniforms(tape.used, span), threshold, longest).tolist()
        takes.append(0)  # (a stop for the hop that ends exactly at the end of the piece)
        at, left = 0, n - len(out)
        while left and takes[at]:  # 0: not known from this piece
            take = takes[at]
            out.append(take - 1)
            at += take
            left -= 1
        tape.used += at
        if left:
            out.append(_long_product_count(tape, threshold, 2 * longest))
    return out


def _long_product_count(tape: _UniformTape, threshold: float, reach: int) -> int:
    """One element of the multiplying sampler from where the tape stands: the running product of the next
    ``reach`` uniforms (a 1-D accumulate multiplies in order, rounding each step as C does), further if it
    does not fall to the threshold. (``tape.each`` would first list all the tape read ahead.)"""
    while True:
        below = np.flatnonzero(np.multiply.accumulate(tape.uniforms(tape.used, reach)) <= threshold)
        if len(below):
            tape.used += int(below[0]) + 1
            return int(below[0])
        reach *= 2


_PRODUCT_PIECE = 1 << 16  # tape positions per piece: the products held are this times ``longest``


def _product_lengths(uniforms: np.ndarray, threshold: float, longest: int) -> np.ndarray:
    """Per start t, how many uniforms ``_sample_poisson`` multiplies before the product is <= threshold; 0 where
    that is more than ``longest`` or runs past the end. Row d holds every start's product of d + 1 uniforms, in
    C's order and rounding (1.0 * u, then times each next one); each start's products only decrease (rounding
    is monotone), so the count of those above the threshold is where it first falls to it."""
    lengths = np.zeros(len(uniforms), dtype=np.int64)
    starts = len(uniforms) - longest + 1
    if starts <= 0:
        return lengths
    products = np.empty((longest, starts))
    products[0] = uniforms[:starts]
    for d in range(1, longest):
        np.multiply(products[d - 1], uniforms[d:d + starts], out=products[d])
    above = (products > threshold).sum(axis=0)
    lengths[:starts] = np.where(products[-1] <= threshold, above + 1, 0)
    return lengths


def _ptrs_run(tape: _UniformTape, rate: float, constants: tuple[float, ...], n: int) -> list[int]:
    """PTRS ``n`` times over for one rate: every try takes two uniforms, whatever element it is for, and
    whether it is accepted depends on them alone; so the tries of a piece of the tape are judged at once, and
    the i-th accepted one is the i-th element."""
    out: list[int] = []
    while len(out) < n:
        need = n - len(out)
        tries = need + need // 4 + 16  # (about 90% are accepted)
        drawn = tape.uniforms(tape.used, 2 * tries).reshape(tries, 2)
        samples, accepted = _ptrs_tries(drawn[:, 0], drawn[:, 1], rate, constants)
        taken = np.flatnonzero(accepted)[:need]
        out += _to_int64s(samples[taken]).tolist()
        tape.used += 2 * (int(taken[-1]) + 1 if len(taken) == need else tries)
    return out


def _ptrs_tries(first: np.ndarray, v: np.ndarray, rate: float,
                constants: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """``_poisson_ptrs``'s tries on uniform pairs (u, v), in the same arithmetic: (k, accepted) per try. The
    log test runs only where the quick tests decide nothing (lgamma through the C library, one by one)."""
    log_rate, b, a, log_inv_alpha, v_r = constants
    u = first - 0.5
    us = 0.5 - np.abs(u)
    with np.errstate(divide="ignore", invalid="ignore"):  # (us = 0: a rejected try, see _ratio_draw)
        k = np.floor((2 * a / us + b) * u + rate + 0.43)
    accepted = (us >= 0.07) & (v <= v_r)
    open_ = np.flatnonzero(~accepted & (us > 0) & (k >= 0) & ~((us < 0.013) & (v > us)))
    if len(open_):
        ko, uso, vo = k[open_], us[open_], v[open_]
        left = _libm_where(math.log, vo, vo > 0, -_INF) + log_inv_alpha - libm(math.log, a / (uso * uso) + b)
        accepted[open_] = left <= -rate + ko * log_rate - _lgamma(ko + 1)
    return k, accepted


def _sample_poisson(row: tuple[float, float | tuple[float, ...]], u: Callable[[], float], normal: list) -> int:
    """``sample_poisson``: Hoermann's transformed rejection (PTRS) from 10 on, else multiplying uniforms."""
    rate, constants = row
    if rate >= 10:
        return _poisson_ptrs(rate, constants, u)
    if rate == 0:
        return 0
    count, product = 0, 1.0
    while True:
        product *= u()
        if product <= constants:
            return count
        count += 1


def _ratio_draw(u: Callable[[], float]) -> tuple[float, float, float] | None:
    """One (u, v, us) draw of the transformed-rejection samplers (PTRS, BTRS); None for u = -0.5, where C's
    k = floor(-inf) < 0 rejects the pair."""
    centred = u() - 0.5
    v = u()
    us = 0.5 - abs(centred)
    return None if us == 0 else (centred, v, us)


def _poisson_ptrs(rate: float, constants: tuple[float, ...], draw: Callable[[], float]) -> int:
    log_rate, b, a, log_inv_alpha, v_r = constants
    while True:
        drawn = _ratio_draw(draw)
        if drawn is None:
            continue
        u, v, us = drawn
        k = _floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return _to_int64(k)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if _log(v) + log_inv_alpha - math.log(a / (us * us) + b) <= -rate + k * log_rate - _lgamma_one(k + 1):
            return _to_int64(k)


def _to_int64(k: float) -> int:
    """static_cast<int64_t>(double) on x86: out of range (inf included) gives INT64_MIN."""
    return int(k) if -2.0 ** 63 <= k < 2.0 ** 63 else -(1 << 63)


def _to_int64s(k: np.ndarray) -> np.ndarray:
    """``_to_int64`` of each element."""
    inside = (k >= -2.0 ** 63) & (k < 2.0 ** 63)
    return np.where(inside, k, -2.0 ** 63).astype(np.int64)


def _lgamma(x: np.ndarray) -> np.ndarray:
    """The C library's lgamma of each element (``math.lgamma`` is CPython's own), once per distinct value: the
    samplers pass k + 1 for integers k, few of them."""
    distinct, where = np.unique(x, return_inverse=True)
    return np.array([_lgamma_one(value) for value in distinct.tolist()], dtype=np.float64)[where]


@functools.lru_cache(maxsize=1 << 12)
def _lgamma_one(x: float) -> float:
    """The C library's lgamma, remembered: PTRS asks for the same k + 1 again and again (a ctypes call costs
    ten dictionary lookups)."""
    return _LIBM.lgamma(x)


def _binomial_plan(key: tuple[float, float], scalar: Callable[[float], float] = float) -> tuple:
    """How ``sample_binomial<scalar_t, double>`` goes for (count, prob), as (flip, method, constants, scalar):
    BTRS when the mean (of the rarer outcome) is 10 or more, else inversion by summing geometric waiting times;
    p > 0.5 samples the failures (flip). Arithmetic on count and p is in scalar_t (``scalar`` rounds to it).
    When nothing is drawn, method is None and constants the value."""
    count, prob = key
    if count <= 0.0 or prob <= 0.0:
        return False, None, 0.0, scalar
    if prob >= 1.0:
        return False, None, count, scalar
    if prob != prob or count != count:
        return False, None, math.nan, scalar  # (torch's inversion loop never ends on a NaN count)
    flip = prob > 0.5
    p = scalar(1.0 - prob) if flip else prob
    if scalar(count * p) >= 10.0:
        return flip, _btrs, _btrs_constants(count, p, scalar), scalar
    log_q = _LIBM.log1pf(-p) if scalar is _single else math.log1p(-p)  # std::log1p on scalar_t
    return flip, _binomial_inversion, log_q, scalar


def _binomial_plan_single(key: tuple[float, float]) -> tuple:
    return _binomial_plan(key, _single)


def _sample_binomial(row: tuple[tuple[float, float], tuple], u: Callable[[], float], normal: list) -> float:
    """``sample_binomial`` on ``_binomial_plan``'s plan."""
    (count, _), (flip, method, constants, scalar) = row
    if method is None:
        return constants
    k = method(count, constants, scalar, u)
    return scalar(count - k) if flip else k


def _binomial_inversion(count: float, log_q: float, scalar, u: Callable[[], float]) -> float:
    """Sum ceil(log(u) / log(1 - p)) until past count (a finite count: an infinite one has mean >= 10)."""
    total, successes = 0.0, 0.0
    while True:
        uniform = u()
        if uniform == 0:  # log(0) = -inf: an infinite wait, past any count
            return successes
        total += math.ceil(math.log(uniform) / log_q)  # (finite and positive: an exact int)
        if total > count:
            return successes
        successes += 1


def _btrs_constants(count: float, prob: float, scalar) -> tuple[float, ...]:
    """BTRS's per-(count, prob) values, in scalar_t where ATen keeps them; the bound's constant terms kept apart
    (the sampler adds them in ATen's order)."""
    stddev = scalar(math.sqrt(scalar(scalar(count * prob) * scalar(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = scalar(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = scalar(prob / scalar(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(scalar(scalar(count + 1) * prob))
    head = (m + 0.5) * _log((m + 1) / (r * (count - m + 1)))
    return b, a, c, v_r, r, alpha, m, head, _stirling_tail(m), _stirling_tail(count - m)


def _btrs(count: float, constants: tuple[float, ...], scalar, draw: Callable[[], float]) -> float:
    """Hoermann's BTRS as TensorFlow and ATen write it; count and prob stay in scalar_t where ATen keeps them."""
    b, a, c, v_r, r, alpha, m, head, tail_m, tail_rest = constants
    while True:
        drawn = _ratio_draw(draw)
        if drawn is None:
            continue
        u, v, us = drawn
        k = scalar(_floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        n_k1 = scalar(scalar(count - k) + 1)
        bound = (head
                 + scalar(count + 1) * _log((count - m + 1) / n_k1)
                 + (k + 0.5) * _log(r * n_k1 / scalar(k + 1))
                 + tail_m + tail_rest
                 - _stirling_tail(k) - _stirling_tail(scalar(count - k)))
        if v <= bound:
            return k


_STIRLING_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                   0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                   0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k: float) -> float:
    """log k! minus Stirling's approximation: a table to 9, then its series (in double)."""
    if k <= 9:
        return _STIRLING_TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _real(np_dtype: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts."""
    return np.dtype(np.float32) if np_dtype == np.complex64 else np.dtype(np.float64)


def _as_complex(parts: np.ndarray, np_dtype: np.dtype) -> np.ndarray:
    """Draws of shape ``(..., 2)`` (real, imaginary) as a complex array of shape ``(...)``."""
    return np.ascontiguousarray(parts).view(np_dtype)[..., 0]
