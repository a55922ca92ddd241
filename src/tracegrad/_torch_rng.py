"""torch's CPU random stream, reimplemented on NumPy's MT19937 so that seeds give torch's numbers.

torch's CPU generator is mt19937 seeded by ``init_genrand`` with the seed's low 32 bits, which is NumPy's
``MT19937._legacy_seeding``; the distributions below follow ATen's ``DistributionsHelper.h``,
``TransformationHelper.h`` and ``cpu/DistributionTemplates.h`` (draw counts, order and arithmetic).
"""
from __future__ import annotations

import ctypes
import math
import operator
import struct

import numpy as np

_MASK32 = 0xFFFFFFFF
_STATE_BYTES = 5056  # sizeof(CPUGeneratorImplState): the legacy THGeneratorState plus the float normal cache
_KEYS_AT = 24  # the 624 mt19937 words, each stored as a uint64, follow seed, left, seeded and next
_NORMAL_AT = _KEYS_AT + 624 * 8  # normal_x, normal_y, normal_rho (double), normal_is_valid (int)
_FLOAT_NORMAL_AT = 5048  # next_float_normal_sample (float), is_next_float_normal_sample_valid (bool)
_OPMATH = {np.dtype(np.float64): np.float64}  # every other float kernel computes in float (at::opmath_type)


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
        return self.bits.random_raw(n).astype(np.uint64)

    def raw64(self, n: int) -> np.ndarray:
        """``n`` successive ``generator->random64()``: the first 32-bit draw is the high half."""
        words = self.raw32(2 * n)
        return (words[0::2] << np.uint64(32)) | words[1::2]

    # ---- uniform ------------------------------------------------------------------------------------------

    def unit(self, n: int, opmath: type) -> np.ndarray:
        """``uniform_real_distribution<opmath>(0, 1)``: 24 bits of random() for float, 53 of random64() for double."""
        if opmath is np.float64:
            return (self.raw64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53
        return (self.raw32(n) & np.uint64((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)

    def uniform(self, shape: tuple, np_dtype: np.dtype, low: float = 0.0, high: float = 1.0,
                fused: bool = True) -> np.ndarray:
        """``uniform_kernel``: x * (to - from) + from in opmath, cast, and a result rounded up to ``to`` -> ``from``.
        ``fused``: one rounding, as GCC contracts it in ATen/native/cpu; kernels outside that folder round twice."""
        np_dtype = np.dtype(np_dtype)
        opmath = _OPMATH.get(np_dtype, np.float32)
        lo, hi = opmath(low), opmath(high)
        x = self.unit(int(np.prod(shape, dtype=np.int64)), opmath)
        if low == 0.0 and high == 1.0:  # x * 1 + 0: exact
            values = x.astype(np_dtype, copy=False)
        else:
            values = (_fma(x, hi - lo, lo) if fused else x * (hi - lo) + lo).astype(np_dtype)
        if low != 0.0 or high != 1.0 or np_dtype.itemsize < 4:
            values[values == np_dtype.type(high)] = np_dtype.type(low)
        return values.reshape(shape)

    # ---- normal -------------------------------------------------------------------------------------------

    def normal(self, shape: tuple, np_dtype: np.dtype, mean: float = 0.0, std: float = 1.0,
               contiguous: bool = True) -> np.ndarray:
        """``normal_kernel``: 16-at-a-time Box-Muller for contiguous tensors of 16 or more, else scalar draws."""
        np_dtype = np.dtype(np_dtype)
        size = int(np.prod(shape, dtype=np.int64))
        if size >= 16 and contiguous:
            return self._normal_fill(size, np_dtype, mean, std).reshape(shape)
        return self.scalar_normal(size, mean, std).astype(np_dtype).reshape(shape)

    def _normal_fill(self, size: int, np_dtype: np.dtype, mean: float, std: float) -> np.ndarray:
        """``normal_fill``: uniforms, Box-Muller per block of 16, the last 16 redrawn when size % 16 != 0."""
        opmath = _OPMATH.get(np_dtype, np.float32)
        blocks = size // 16
        # float and double draw one uniform per element; half and bfloat16 draw 16 per whole block only
        head = self.unit(size if opmath is np_dtype.type else 16 * blocks, opmath)[:16 * blocks]
        tail = self.unit(16 if size % 16 else 0, opmath)
        normals = _box_muller_16(np.concatenate([head, tail]).reshape(-1, 16), mean, std).ravel()
        out = normals[:size].astype(np_dtype)  # a copy: the tail's 16 then overwrite the last 16
        if size % 16:
            out[-16:] = normals[-16:]
        return out

    def scalar_normal(self, n: int, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """``normal_distribution<double>`` ``n`` times: each Box-Muller pair gives cos, and caches sin for the next."""
        cached = [] if self.next_double_normal is None else [self.next_double_normal]
        pairs = max(0, -(-(n - len(cached)) // 2))
        u = self.unit(2 * pairs, np.float64).reshape(pairs, 2)
        radius = np.sqrt(-2.0 * libm(math.log1p, -u[:, 1]))
        theta = 2.0 * np.pi * u[:, 0]
        drawn = np.stack([radius * libm(math.cos, theta), radius * libm(math.sin, theta)], axis=1).ravel()
        standard = np.concatenate([np.asarray(cached, dtype=np.float64), drawn])
        self.next_double_normal = float(standard[n]) if len(standard) > n else None
        return _fma(standard[:n], std, mean)

    # ---- integers -----------------------------------------------------------------------------------------

    def random_from_to(self, n: int, low: int, high: int) -> np.ndarray:
        """``uniform_int_from_to``: (word % range) + from, the word being random64() when range >= 2**28."""
        span = int(high) - int(low)
        words = self.raw64(n) if span >= 1 << 28 else self.raw32(n)
        # in uint64, wrapping like C++'s unsigned sum, then read as int64: right for spans beyond int64 too
        return ((words % np.uint64(span)) + np.uint64(int(low) & ((1 << 64) - 1))).view(np.int64)

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
        if np_dtype.kind == "f":
            digits = np.finfo(np_dtype).nmant + 1
            return (words % np.uint64((1 << digits) + 1)).astype(np_dtype)
        return (words % np.uint64(int(np.iinfo(np_dtype).max) + 1)).astype(np_dtype)

    def randperm(self, n: int) -> np.ndarray:
        """``randperm_cpu``: Fisher-Yates with z = random() % (n - i), or the inside-out one for huge n."""
        if n < _MASK32 // 20:
            picks = (self.raw32(max(n - 1, 0)) % np.arange(n, 1, -1, dtype=np.uint64)).astype(np.int64)
            picks += np.arange(len(picks), dtype=np.int64)
            return _swap_each(n, picks.tolist())
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
        with _UniformTape(self, 3 * flat.size) as tape:
            draws = [_sample_gamma(a, single, tape) for a in flat.tolist()]
        tiny = np.finfo(np.float32 if single else np.float64).tiny
        out = np.array(draws, dtype=np.float64)
        return np.where(out > tiny, out, tiny).reshape(np.shape(alpha))  # std::max(tiny, NaN) is tiny

    def poisson(self, rates: np.ndarray) -> np.ndarray:
        """``_s_poisson_cpu``: ``sample_poisson(double(rate))`` per element in C order, as int64."""
        flat = np.ascontiguousarray(rates, dtype=np.float64).ravel()
        with _UniformTape(self, int(np.minimum(flat, 10.0).sum()) + 3 * flat.size) as tape:
            draws = [_sample_poisson(rate, tape) for rate in flat.tolist()]
        return np.array(draws, dtype=np.int64).reshape(np.shape(rates))

    def binomial(self, count: np.ndarray, prob: np.ndarray, single: bool) -> np.ndarray:
        """``_s_binomial_cpu``: ``sample_binomial`` per element in C order (count's float type, double uniforms)."""
        count, prob = np.broadcast_arrays(np.asarray(count, dtype=np.float64), np.asarray(prob, dtype=np.float64))
        with _UniformTape(self, 4 * count.size) as tape:
            draws = [_sample_binomial(n, p, single, tape) for n, p in zip(count.ravel().tolist(),
                                                                          prob.ravel().tolist())]
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
            raise RuntimeError(f"Expected either a THGeneratorState of size 5048 or a CPUGeneratorImplState of "
                               f"size {_STATE_BYTES} but found the input RNG state size to be {len(raw)}")
        seed, left, _, _ = struct.unpack_from("<QiiQ", raw, 0)
        key = np.frombuffer(raw, dtype="<u8", count=624, offset=_KEYS_AT).astype(np.uint32)
        _, cached, _, valid = struct.unpack_from("<dddi", raw, _NORMAL_AT)
        self.seed = seed
        self.bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 625 - left}}
        self.fresh = struct.unpack_from("<Q", raw, 16)[0] == 0
        self.next_double_normal = cached if valid else None


def _swap_each(n: int, picks: list[int]) -> np.ndarray:
    """Sequential swaps r[i] <-> r[picks[i]]: each depends on the ones before, so it stays a loop."""
    result = list(range(n))
    for i, z in enumerate(picks):
        result[i], result[z] = result[z], result[i]
    return np.array(result, dtype=np.int64)


def _fma32(a, b, c) -> np.ndarray:
    """float32 fma: the float64 product of two floats is exact, so only the sum rounds (twice, harmlessly rare)."""
    product = np.multiply(a, b, dtype=np.float64)
    return np.add(product, c, out=np.empty(product.shape, np.float32), dtype=np.float64, casting="unsafe")


def _fma(a: np.ndarray, b, c) -> np.ndarray:
    """fma(a, b, c) as torch's compiled kernels do it (they fuse x * scale + shift into one rounding)."""
    if c == 0:  # a * b + 0 rounds once
        return a * a.dtype.type(b)
    if a.dtype != np.float64:  # float kernels hold mean, std, from and to as floats
        return _fma32(a, np.float32(b), np.float32(c)).astype(a.dtype)
    b = np.float64(b)
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


def libm(fn, values: np.ndarray) -> np.ndarray:
    """A float64 function through the C library, as torch calls it: NumPy's SIMD log/sin... differ in the last bit."""
    values = np.asarray(values, dtype=np.float64)
    return np.fromiter(map(fn, values.ravel().tolist()), dtype=np.float64, count=values.size).reshape(values.shape)


def _box_muller_16(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``NormalFill16`` on rows of 16 uniforms: u1 = 1 - row[j], u2 = row[j + 8] give row[j] and row[j + 8]."""
    u1, u2 = 1 - blocks[:, :8], blocks[:, 8:]
    if blocks.dtype == np.float32:
        # the AVX2 kernel: Cephes log and sincos (avx_mathfun.h) in float32, op for op
        radius = np.sqrt(np.float32(-2.0) * _log_ps(u1))
        sin, cos = _sincos_ps(np.float32(2.0 * np.pi) * u2)
    else:
        radius = np.sqrt(-2 * libm(math.log, u1))
        theta = 2.0 * np.pi * u2
        sin, cos = libm(math.sin, theta), libm(math.cos, theta)
    return np.concatenate([_fma(radius * cos, std, mean), _fma(radius * sin, std, mean)], axis=1)


_F = np.float32
_LOG_P = [_F(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]


def _log_ps(x: np.ndarray) -> np.ndarray:
    """avx_mathfun's ``log256_ps`` for positive normal floats: its operations, with the fma contractions GCC makes."""
    bits = np.maximum(x, _F(1.1754943508222875e-38)).view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _F(1)
    x = ((bits & ~0x7F800000) | 0x3F000000).view(np.float32)  # mantissa in [0.5, 1)
    small = x < _F(0.707106781186547524)
    x = (x - _F(1)) + np.where(small, x, _F(0))
    e = e - np.where(small, _F(1), _F(0))
    z = x * x
    y = _LOG_P[0]
    for coefficient in _LOG_P[1:]:
        y = _fma32(y, x, coefficient)
    y = _fma32(y * x, z, e * _F(-2.12194440e-4))
    y = _fma32(-z, _F(0.5), y)
    return _fma32(e, _F(0.693359375), x + y)


def _sincos_ps(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """avx_mathfun's ``sincos256_ps`` for x >= 0: (sin, cos), its operations and GCC's fma contractions."""
    j = ((x * _F(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    for part in (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8):
        x = _fma32(y, _F(part), x)
    z = x * x
    cos_poly = _fma32(_fma32(_F(2.443315711809948E-005), z, _F(-1.388731625493765E-003)), z,
                      _F(4.166664568298827E-002))
    cos_poly = _fma32(cos_poly * z, z, -(z * _F(0.5))) + _F(1)
    sin_poly = _fma32(_fma32(_F(-1.9515295891E-4), z, _F(8.3321608736E-3)), z, _F(-1.6666654611E-1))
    sin_poly = _fma32(sin_poly * z, x, x)
    near_zero = (j & 2) == 0
    sin = np.where(near_zero, sin_poly, cos_poly)
    cos = np.where(near_zero, cos_poly, sin_poly)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) == 0, -cos, cos)
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


class _UniformTape:
    """``uniform_real_distribution<double>(0, 1)`` draws for a rejection loop: read ahead in bulk, and on leaving
    the generator is set just after the last one used, as if each had been drawn on demand."""

    def __init__(self, stream: TorchCPUStream, expected: int) -> None:
        self.stream = stream
        self.start = stream.bits.state
        self.fresh = stream.fresh
        self.cached = stream.next_double_normal  # normal_distribution<double>'s sine, shared with other ops
        self.drawn = 0
        self.chunk = max(int(expected), 64)
        self.values = iter(())

    def __enter__(self) -> _UniformTape:
        return self

    def __call__(self) -> float:
        value = next(self.values, None)
        if value is None:  # read more: the loop needed more than expected
            self.values = iter(self.stream.unit(self.chunk, np.float64).tolist())
            self.drawn += self.chunk
            self.chunk *= 2
            value = next(self.values)
        return value

    def normal(self) -> float:
        """``normal_distribution<double>(0, 1)``: the cached sine, else Box-Muller on two uniforms (caching sine)."""
        if self.cached is not None:
            value, self.cached = self.cached, None
            return value
        u1, u2 = self(), self()
        radius = math.sqrt(-2.0 * math.log1p(-u2))
        theta = 2.0 * math.pi * u1
        self.cached = radius * math.sin(theta)
        return radius * math.cos(theta)

    def __exit__(self, *exc) -> None:
        used = self.drawn - operator.length_hint(self.values)
        self.stream.bits.state = self.start
        self.stream.raw32(2 * used)  # random64() per double uniform
        self.stream.fresh = self.fresh and used == 0
        self.stream.next_double_normal = self.cached


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


def _inverse_sqrt(x: float) -> float:
    if x > 0 or x != x:
        return 1.0 / math.sqrt(x)
    return _INF if x == 0 else math.nan


def _floor(x: float) -> float:
    return float(math.floor(x)) if math.isfinite(x) else x


def _ceil(x: float) -> float:
    return float(math.ceil(x)) if math.isfinite(x) else x


def _sample_gamma(alpha: float, single: bool, tape: _UniformTape) -> float:
    """``sample_gamma<scalar_t, double>``: Marsaglia-Tsang; alpha < 1 is boosted by one and scaled by u**(1/alpha).
    Arithmetic on alpha itself is in scalar_t (float when ``single``), the rest in double."""
    scalar = _single if single else float
    scale = 1.0
    if alpha < 1.0:
        if alpha == 0.0:
            return 0.0
        scale *= _pow(1 - tape(), scalar(1.0 / alpha))
        alpha = scalar(alpha + 1.0)
    d = scalar(alpha - _THIRD_F)
    c = _inverse_sqrt(9.0 * d)
    while True:
        x = tape.normal()
        y = 1.0 + c * x
        while y <= 0:
            x = tape.normal()
            y = 1.0 + c * x
        v = y * y * y
        u = 1 - tape()
        xx = x * x
        if u < 1.0 - 0.033100001513957977 * xx * xx:  # 0.0331f
            return scalar(scale * d * v)
        if math.log(u) < 0.5 * xx + d * (1.0 - v + _log(v)):
            return scalar(scale * d * v)


def _sample_poisson(rate: float, tape: _UniformTape) -> int:
    """``sample_poisson``: Hoermann's transformed rejection (PTRS) from 10 on, else multiplying uniforms."""
    if rate >= 10:
        return _poisson_ptrs(rate, tape)
    if rate == 0:
        return 0
    limit = math.exp(-rate)
    count, product = 0, 1.0
    while True:
        product *= tape()
        if product <= limit:
            return count
        count += 1


def _ratio_draw(tape: _UniformTape) -> tuple[float, float, float] | None:
    """One (u, v, us) draw of the transformed-rejection samplers (PTRS, BTRS); None for u = -0.5, where C's
    k = floor(-inf) < 0 rejects the pair."""
    u = tape() - 0.5
    v = tape()
    us = 0.5 - abs(u)
    return None if us == 0 else (u, v, us)


def _poisson_ptrs(rate: float, tape: _UniformTape) -> int:
    log_rate = math.log(rate)
    b = 0.931 + 2.53 * math.sqrt(rate)
    a = -0.059 + 0.02483 * b
    log_inv_alpha = math.log(1.1239 + 1.1328 / (b - 3.4))
    v_r = 0.9277 - 3.6224 / (b - 2)
    while True:
        drawn = _ratio_draw(tape)
        if drawn is None:
            continue
        u, v, us = drawn
        k = _floor((2 * a / us + b) * u + rate + 0.43)
        if us >= 0.07 and v <= v_r:
            return _to_int64(k)
        if k < 0 or (us < 0.013 and v > us):
            continue
        if _log(v) + log_inv_alpha - math.log(a / (us * us) + b) <= -rate + k * log_rate - _LIBM.lgamma(k + 1):
            return _to_int64(k)


def _to_int64(k: float) -> int:
    """static_cast<int64_t>(double) on x86: out of range (inf included) gives INT64_MIN."""
    return int(k) if -2.0 ** 63 <= k < 2.0 ** 63 else -(1 << 63)


def _sample_binomial(count: float, prob: float, single: bool, tape: _UniformTape) -> float:
    """``sample_binomial<scalar_t, double>``: BTRS when the mean (of the rarer outcome) is 10 or more, else
    inversion by summing geometric waiting times; p > 0.5 samples the failures."""
    scalar = _single if single else float
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if prob != prob:
        return math.nan
    if count != count:
        return math.nan  # torch's inversion loop never ends on a NaN count
    flip = prob > 0.5
    p = scalar(1.0 - prob) if flip else prob
    if scalar(count * p) >= 10.0:
        k = _btrs(count, p, scalar, tape)
    else:
        k = _binomial_inversion(count, p, single, tape)
    return scalar(count - k) if flip else k


def _binomial_inversion(count: float, prob: float, single: bool, tape: _UniformTape) -> float:
    log_q = _LIBM.log1pf(-prob) if single else math.log1p(-prob)  # std::log1p on scalar_t
    total, successes = 0.0, 0.0
    while True:
        total += _ceil(_log(tape()) / log_q)
        if total > count:
            return successes
        successes += 1


def _btrs(count: float, prob: float, scalar, tape: _UniformTape) -> float:
    """Hoermann's BTRS as TensorFlow and ATen write it; count and prob stay in scalar_t where ATen keeps them."""
    stddev = scalar(math.sqrt(scalar(scalar(count * prob) * scalar(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = scalar(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    r = scalar(prob / scalar(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = _floor(scalar(scalar(count + 1) * prob))
    while True:
        drawn = _ratio_draw(tape)
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
        bound = ((m + 0.5) * _log((m + 1) / (r * (count - m + 1)))
                 + scalar(count + 1) * _log((count - m + 1) / n_k1)
                 + (k + 0.5) * _log(r * n_k1 / scalar(k + 1))
                 + _stirling_tail(m) + _stirling_tail(count - m)
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
