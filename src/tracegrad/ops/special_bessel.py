"""``torch.special``'s Bessel-family functions: ``bessel_j0/j1/y0/y1``, ``modified_bessel_i0/i1/k0/k1``,
``scaled_modified_bessel_k0/k1``, ``spherical_bessel_j0`` and ``airy_ai``.

Each is PyTorch's CPU kernel (ATen's Math.h, after Cephes) written over whole arrays: the same rational
approximations (Horner) and Chebyshev series (Clenshaw), the same branch points and special values, chosen per
element with ``np.where``; the arithmetic runs in the input's dtype, so float32 results round as PyTorch's do.
(``modified_bessel_i0`` is not ``torch.special.i0``: PyTorch computes the two differently, and so does this.)

None is differentiable in PyTorch: the results never require grad.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from .._tensor import Tensor
from .registry import defop
from .special_polynomials import float_kernel_dtype
from .unary import call

_PIO4 = math.pi / 4
_3PIO4 = 3 * math.pi / 4
_SQ2OPI = math.sqrt(2 / math.pi)
_2OPI = 2 / math.pi
_1OSQPI = 1 / math.sqrt(math.pi)


def fused_multiply_add(a: np.ndarray, b: np.ndarray | float, c: np.ndarray | float) -> np.ndarray:
    """a * b + c rounded once, as the FMA instructions the compiler fuses PyTorch's CPU kernels' a * b + c into
    (they are built with -mfma): exact for float32 (the product is exact in float64, then one rounding, barring
    a double rounding about once in 2^29); float64 has no fused NumPy operation, so there it rounds twice."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * np.asarray(b, dtype=np.float64) + np.asarray(c, dtype=np.float64)).astype(
            np.float32)
    return a * b + c


def _libm(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``fn`` (np.exp, np.log, ...) as glibc computes it in x's dtype. For float32, glibc's own expf and logf
    (emulated: NumPy's float32 SIMD loops differ from them), the others through float64 and one rounding
    (within an ulp of glibc's)."""
    if x.dtype == np.float32:
        from .nn_ops.glibc_float_math import exp_float, log_float  # (nn_ops imports this module's package)

        emulated = {np.exp: exp_float, np.log: log_float}.get(fn)
        return emulated(x) if emulated is not None else fn(x.astype(np.float64)).astype(np.float32)
    return fn(x)


def _horner(coeffs: Sequence[float], z: np.ndarray, fused: bool = False) -> np.ndarray:
    """c[0] z^(k-1) + ... + c[k-1], the constants rounded to z's dtype first (as the C++ static arrays are).

    Started from 0 as Cephes' polevl (so an infinite z gives NaN, as there). Unfused, updated in place (the
    roundings of ``total * z + v`` without a temporary per step); ``fused``: each step one FMA."""
    total = np.zeros_like(z)
    for v in np.asarray(coeffs, dtype=z.dtype):
        if fused:
            total = fused_multiply_add(total, z, v)
        else:
            total *= z
            total += v
    return total


def _clenshaw(coeffs: Sequence[float], z: np.ndarray, fused: bool = False) -> np.ndarray:
    """Cephes' chbevl: the Chebyshev series sum at z / 2, returned as 0.5 (b0 - b2) in z's dtype.

    Each step b0 <- z b1 - b2 + c is written into the buffer of the b2 it retires (no temporaries: these series
    are 7 to 30 terms long and dominate the Bessel kernels' time). ``fused``: z b1 - b2 is one FMA, as compiled
    into PyTorch's chbevl; for float32 the recurrence then runs in float64 buffers rounded to float32 after the
    FMA and after the addition (exactly float32's arithmetic, barring rare double roundings)."""
    if fused and z.dtype == np.float32:
        return _clenshaw_fused32(coeffs, z)
    c = np.asarray(coeffs, dtype=z.dtype)
    b0, b1, b2 = np.full_like(z, c[0]), np.zeros_like(z), np.zeros_like(z)
    for v in c[1:]:
        b0, b1, b2 = b2, b0, b1  # the retired b2 becomes the new b0's buffer
        np.multiply(z, b1, out=b0)
        b0 -= b2
        b0 += v
    return z.dtype.type(0.5) * (b0 - b2)


def _clenshaw_fused32(coeffs: Sequence[float], z: np.ndarray) -> np.ndarray:
    c = np.asarray(coeffs, dtype=np.float32)
    z64 = z.astype(np.float64)
    b0, b1, b2 = np.full(z.shape, c[0], np.float64), np.zeros(z.shape), np.zeros(z.shape)
    rounded = np.empty(z.shape, np.float32)
    for v in c[1:]:
        b0, b1, b2 = b2, b0, b1
        np.multiply(z64, b1, out=b0)  # exact: a product of two float32 values
        b0 -= b2
        rounded[...] = b0
        rounded += v
        b0[...] = rounded
    return np.float32(0.5) * (b0 - b2).astype(np.float32)


# ---- Bessel functions of the first and second kind (Cephes j0.c / j1.c) ------------------------------------

_J0_PP = (7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
          5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
          9.99999999999999997821e-01)
_J0_PQ = (9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
          5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
          1.00000000000000000218e+00)
_J0_QP = (-1.13663838898469149931e-02, -1.28252718670509318512e+00, -1.95539544257735972385e+01,
          -9.32060152123768231369e+01, -1.77681167980488050595e+02, -1.47077505154951170175e+02,
          -5.14105326766599330220e+01, -6.05014350600728481186e+00)
_J0_QQ = (6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
          7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
          2.42005740240291393179e+02)
_J0_RP = (-4.79443220978201773821e+09, 1.95617491946556577543e+12, -2.49248344360967716204e+14,
          9.70862251047306323952e+15)
_J0_RQ = (4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
          1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
          3.18121955943204943306e+16, 1.71086294081043136091e+18)
_Y0_YP = (1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
          -9.82136065717911466409e+11, 8.75906394395366999549e+13, -3.46628303384729719441e+15,
          4.42733268572569800351e+16, -1.84950800436986690637e+16)
_Y0_YQ = (1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
          8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
          2.50596256172653059228e+17)

_J1_PP = (7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
          5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
          1.00000000000000000254e+00)
_J1_PQ = (5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
          5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
          9.99999999999999997461e-01)
_J1_QP = (5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
          3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
          2.11688757100572135698e+02, 2.52070205858023719784e+01)
_J1_QQ = (7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
          9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
          3.36093607810698293419e+02)
_J1_RP = (-8.99971225705559398224e+08, 4.52228297998194034323e+11, -7.27494245221818276015e+13,
          3.68295732863852883286e+15)
_J1_RQ = (6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
          2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
          8.95222336184627338078e+16, 5.32278620332680085395e+18)
_Y1_YP = (1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
          -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17)
_Y1_YQ = (5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
          1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
          6.87141087355300489866e+16, 3.97270608116560655612e+18)


def _hankel(x: np.ndarray, w: np.ndarray, order: int, second_kind: bool) -> np.ndarray:
    """The large-argument form P cos(x - phase) - (5/x) Q sin(x - phase) (J), or its sin/cos swap (Y)."""
    dt = x.dtype.type
    pp, pq, qp, qq = (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ) if order == 0 else (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ)
    p = _horner(pp, w) / _horner(pq, w)
    q = _horner(qp, w) / _horner(qq, w)
    shifted = x - dt(_PIO4 if order == 0 else _3PIO4)
    if second_kind:
        inner = p * np.sin(shifted) + dt(5.0) / x * q * np.cos(shifted)
    else:
        inner = p * np.cos(shifted) - dt(5.0) / x * q * np.sin(shifted)
    return inner * dt(_SQ2OPI) / np.sqrt(x)


def _j0(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    x = np.abs(x)
    z = x * x
    small = (z - dt(5.78318596294678452118e+00)) * (z - dt(3.04712623436620863991e+01)) \
        * _horner(_J0_RP, z) / _horner(_J0_RQ, z)
    small = np.where(x < dt(1e-5), dt(1.0) - z / dt(4.0), small)
    return np.where(x <= 5, small, _hankel(x, dt(25.0) / z, 0, False))


def _j1(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    sign, x = np.where(x < 0, dt(-1.0), dt(1.0)), np.abs(x)  # (J1 is odd: PyTorch negates J1(-x))
    z = x * x
    small = _horner(_J1_RP, z) / _horner(_J1_RQ, z) * x * (z - dt(1.46819706421238932572e+01)) \
        * (z - dt(4.92184563216946036703e+01))
    five = dt(5.0) / x
    return sign * np.where(x <= 5, small, _hankel(x, five * five, 1, False))


def _y0(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    z = x * x
    small = _horner(_Y0_YP, z) / _horner(_Y0_YQ, z) + dt(_2OPI) * np.log(x) * _j0(x)
    small = np.where(x == 0, dt(-np.inf), np.where(x < 0, dt(np.nan), small))
    return np.where(x <= 5, small, _hankel(x, dt(25.0) / z, 0, True))


def _y1(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    z = x * x
    small = x * (_horner(_Y1_YP, z) / _horner(_Y1_YQ, z)) + dt(_2OPI) * (_j1(x) * np.log(x) - dt(1.0) / x)
    small = np.where(x == 0, dt(-np.inf), np.where(x < 0, dt(np.nan), small))
    five = dt(5.0) / x
    return np.where(x <= 5, small, _hankel(x, five * five, 1, True))


# ---- modified Bessel functions (Cephes i0.c, i1.c, k0.c, k1.c) ---------------------------------------------

_I0_A = (-4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
         1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
         -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
         9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-09,
         -1.30002500998624804212e-08, 6.04699502254191894932e-08, -2.67079385394061173391e-07,
         1.11738753912010371815e-06, -4.41673835845875056359e-06, 1.64484480707288970893e-05,
         -5.75419501008210370398e-05, 1.88502885095841655729e-04, -5.76375574538582365885e-04,
         1.63947561694133579842e-03, -4.32430999505057594430e-03, 1.05464603945949983183e-02,
         -2.37374148058994688156e-02, 4.93052842396707084878e-02, -9.49010970480476444210e-02,
         1.71620901522208775349e-01, -3.04682672343198398683e-01, 6.76795274409476084995e-01)
_I0_B = (-7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
         3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
         1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
         -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
         7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
         -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
         3.39623202570838634515e-09, 2.26666899049817806459e-08, 2.04891858946906374183e-07,
         2.89137052083475648297e-06, 6.88975834691682398426e-05, 3.36911647825569408990e-03,
         8.04490411014108831608e-01)
_I1_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
         -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
         3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
         -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-09,
         9.38153738649577178388e-09, -4.44505912879632808065e-08, 2.00329475355213526229e-07,
         -8.56872026469545474066e-07, 3.47025130813767847674e-06, -1.32731636560394358279e-05,
         4.78156510755005422638e-05, -1.61760815825896745588e-04, 5.12285956168575772895e-04,
         -1.51357245063125314899e-03, 4.15642294431288815669e-03, -1.05640848946261981558e-02,
         2.47264490306265168283e-02, -5.29459812080949914269e-02, 1.02643658689847095384e-01,
         -1.76416518357834055153e-01, 2.52587186443633654823e-01)
_I1_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
         -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
         -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
         4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
         -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
         3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
         -3.83538038596423702205e-09, -2.63146884688951950684e-08, -2.51223623787020892529e-07,
         -3.88256480887769039346e-06, -1.10588938762623716291e-04, -9.76109749136146840777e-03,
         7.78576235018280120474e-01)
_K0_A = (1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
         1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
         1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
         -5.35327393233902768720e-01)
_K0_B = (5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
         -1.67823109680541210385e-16, 5.51205597852431940784e-16, -1.84859337734377901440e-15,
         6.34007647740507060557e-15, -2.22751332699166985548e-14, 8.03289077536357521100e-14,
         -2.98009692317273043925e-13, 1.14034058820847496303e-12, -4.51459788337394416547e-12,
         1.85594911495471785253e-11, -7.95748924447710747776e-11, 3.57739728140030116597e-10,
         -1.69753450938905987466e-09, 8.57403401741422608519e-09, -4.66048989768794782956e-08,
         2.76681363944501510342e-07, -1.83175552271911948767e-06, 1.39498137188764993662e-05,
         -1.28495495816278026384e-04, 1.56988388573005337491e-03, -3.14481013119645005427e-02,
         2.44030308206595545468e+00)
_K1_A = (-7.02386347938628759343e-18, -2.42744985051936593393e-15, -6.66690169419932900609e-13,
         -1.41148839263352776110e-10, -2.21338763073472585583e-08, -2.43340614156596823496e-06,
         -1.73028895751305206302e-04, -6.97572385963986435018e-03, -1.22611180822657148235e-01,
         -3.53155960776544875667e-01, 1.52530022733894777053e+00)
_K1_B = (-5.75674448366501715755e-18, 1.79405087314755922667e-17, -5.68946255844285935196e-17,
         1.83809354436663880070e-16, -6.05704724837331885336e-16, 2.03870316562433424052e-15,
         -7.01983709041831346144e-15, 2.47715442448130437068e-14, -8.97670518232499435011e-14,
         3.34841966607842919884e-13, -1.28917396095102890680e-12, 5.13963967348173025100e-12,
         -2.12996783842756842877e-11, 9.21831518760500529508e-11, -4.19035475934189648750e-10,
         2.01504975519703286596e-09, -1.03457624656780970260e-08, 5.74108412545004946722e-08,
         -3.50196060308781257119e-07, 2.40648494783721712015e-06, -1.93619797416608296024e-05,
         1.95215518471351631108e-04, -2.85781685962277938680e-03, 1.03923736576817238437e-01,
         2.72062619048444266945e+00)


def _i0(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    ax = np.abs(x)
    small = np.exp(ax) * _clenshaw(_I0_A, ax / dt(2.0) - dt(2.0))
    large = np.exp(ax) * _clenshaw(_I0_B, dt(32.0) / ax - dt(2.0)) / np.sqrt(ax)
    return np.where(ax <= 8, small, large)


def _i1(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    ax = np.abs(x)
    small = _clenshaw(_I1_A, ax / dt(2.0) - dt(2.0)) * ax * np.exp(ax)
    large = np.exp(ax) * _clenshaw(_I1_B, dt(32.0) / ax - dt(2.0)) / np.sqrt(ax)
    out = np.where(ax <= 8, small, large)
    return np.where(x < 0, -out, out)


def _k_domain(x: np.ndarray, value: np.ndarray) -> np.ndarray:
    """K0, K1 and their scaled forms: a pole at 0, undefined below."""
    return np.where(x == 0, x.dtype.type(np.inf), np.where(x < 0, x.dtype.type(np.nan), value))


def _k0_small(x: np.ndarray) -> np.ndarray:
    """K0 on (0, 2]; PyTorch's kernel writes std::log(0.5 * x) with a double 0.5, so in float32 the logarithm
    and the subtraction run in float64 (rounded to float32 on return)."""
    series = _clenshaw(_K0_A, x * x - x.dtype.type(2.0))
    x64 = x.astype(np.float64)
    return series.astype(np.float64) - np.log(0.5 * x64) * _i0(x).astype(np.float64)


def _k1_small(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    return np.log(dt(0.5) * x) * _i1(x) + _clenshaw(_K1_A, x * x - dt(2.0)) / x


def _k_large(coeffs: Sequence[float], x: np.ndarray) -> np.ndarray:
    """exp(x) K(x) beyond 2: a Chebyshev series in 8/x over sqrt(x)."""
    return _clenshaw(coeffs, x.dtype.type(8.0) / x - x.dtype.type(2.0)) / np.sqrt(x)


def _k0(x: np.ndarray) -> np.ndarray:
    large = np.exp(-x) * _clenshaw(_K0_B, x.dtype.type(8.0) / x - x.dtype.type(2.0)) / np.sqrt(x)
    return _k_domain(x, np.where(x <= 2, _k0_small(x).astype(x.dtype), large))


def _k1(x: np.ndarray) -> np.ndarray:
    large = np.exp(-x) * _clenshaw(_K1_B, x.dtype.type(8.0) / x - x.dtype.type(2.0)) / np.sqrt(x)
    return _k_domain(x, np.where(x <= 2, _k1_small(x), large))


def _k0e(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    # (here PyTorch's kernel writes T(0.5): the small branch stays in the input's dtype)
    small = (_clenshaw(_K0_A, x * x - dt(2.0)) - np.log(dt(0.5) * x) * _i0(x)) * np.exp(x)
    return _k_domain(x, np.where(x <= 2, small, _k_large(_K0_B, x)))


def _k1e(x: np.ndarray) -> np.ndarray:
    return _k_domain(x, np.where(x <= 2, _k1_small(x) * np.exp(x), _k_large(_K1_B, x)))


# ---- spherical j0 and Airy Ai ------------------------------------------------------------------------------


def _spherical_j0(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    z = x * x
    # sin(x)/x loses digits near 0: its Taylor polynomial below 1/2 (PyTorch's nesting, constants in T)
    series = dt(1.0) / dt(6227020800.0)
    for denominator in (-39916800.0, 362880.0, -5040.0, 120.0, -6.0):
        series = dt(1.0) / dt(denominator) + z * series
    series = dt(1.0) + z * series
    out = np.where(np.abs(x) < dt(0.5), series, np.sin(x) / x)
    return np.where(np.isinf(x), dt(0.0), out)


_AI_AN = (3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
          1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
          1.40264691163389668864e+01, 9.99999999999999995305e-01)
_AI_AD = (5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
          1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
          1.40959135607834029598e+01, 1.00000000000000000470e+00)
_AI_AFN = (-1.31696323418331795333e-01, -6.26456544431912369773e-01, -6.93158036036933542233e-01,
           -2.79779981545119124951e-01, -4.91900132609500318020e-02, -4.06265923594885404393e-03,
           -1.59276496239262096340e-04, -2.77649108155232920844e-06, -1.67787698489114633780e-08)
_AI_AFD = (1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
           9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
           4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07)
_AI_AGN = (1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
           9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
           5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
           8.11789239554389293311e-08, 3.41551784765923618484e-10)
_AI_AGD = (9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
           5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
           4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
           4.91834570062930015649e-09)


def _airy_series(x: np.ndarray) -> np.ndarray:
    """Ai near 0 from its two Maclaurin series f, g in x^3, summed until the last term of f is below the dtype's
    epsilon relative to f (per element, as PyTorch's loop: finished elements are frozen)."""
    dt = x.dtype.type
    z = x * x * x
    f, g, m, n = np.ones_like(x), x.copy(), np.ones_like(x), x.copy()
    active = np.ones(x.shape, dtype=bool)
    eps = np.finfo(x.dtype).eps
    k = dt(1.0)
    while active.any():
        m2 = m * z
        k2 = k + dt(1.0)
        m2 = m2 / k2
        n2 = n * z
        k3 = k2 + dt(1.0)
        n2 = n2 / k3
        m2 = m2 / k3
        f2 = f + m2
        k = k3 + dt(1.0)
        n2 = n2 / k
        g2 = g + n2
        m, n, f, g = (np.where(active, new, old) for new, old in ((m2, m), (n2, n), (f2, f), (g2, g)))
        active = active & (np.abs(m2 / f2) > eps)  # (NaN compares false: a NaN element stops at once)
    return dt(0.355028053887817239260) * f - dt(0.258819403792806798405) * g


def _airy_ai(x: np.ndarray) -> np.ndarray:
    dt = x.dtype.type
    # oscillating tail, x < -2.09
    xi = dt(-2.0) * x * np.sqrt(-x) / dt(3.0)
    z = dt(1.0) / xi
    zz = z * z
    t = xi + dt(0.25 * math.pi)
    left = dt(_1OSQPI) / np.sqrt(np.sqrt(-x)) * (
        np.sin(t) * (dt(1.0) + zz * _horner(_AI_AFN, zz) / _horner(_AI_AFD, zz))
        - np.cos(t) * (z * _horner(_AI_AGN, zz) / _horner(_AI_AGD, zz)))
    # decaying tail, x >= 2.09
    zeta = dt(2.0) * x * np.sqrt(x) / dt(3.0)
    w = dt(1.0) / zeta
    right = dt(_1OSQPI) * (_horner(_AI_AN, w) / _horner(_AI_AD, w)) / (dt(2.0) * np.sqrt(np.sqrt(x)) * np.exp(zeta))
    middle = (x >= dt(-2.09)) & (x < dt(2.09)) | np.isnan(x)
    inner = np.zeros_like(x)
    inner[middle] = _airy_series(x[middle])
    out = np.where(x < dt(-2.09), left, np.where(x >= dt(2.09), right, inner))
    out = np.where(x > dt(103.892), dt(0.0), out)
    return np.where(np.isinf(x), dt(np.nan), out)


# ---- operators ---------------------------------------------------------------------------------------------


def _kernel(name: str, fn: Callable[[np.ndarray], np.ndarray]):
    def kernel(a):
        dt = float_kernel_dtype(name, a)
        x = np.asarray(a).astype(dt)
        with np.errstate(all="ignore"):
            return np.asarray(fn(x)).astype(dt)

    return kernel


def _unary(name: str, fn: Callable[[np.ndarray], np.ndarray], param: str) -> Callable[..., Tensor]:
    """The operator ``special_<name>`` (no derivative in PyTorch: results never require grad) and its public
    function, whose argument is named as PyTorch's binding names it (``input`` for ``self``, else ``x``)."""
    op = defop(f"special_{name}(Tensor {param}) -> Tensor", _kernel(name, fn), differentiable=())

    if param == "self":

        def public(input: Tensor, *, out: Tensor | None = None) -> Tensor:
            return call(op, out, input)
    else:

        def public(x: Tensor, *, out: Tensor | None = None) -> Tensor:
            return call(op, out, x)

    public.__name__ = public.__qualname__ = name
    public.__doc__ = f"``torch.special.{name}`` (PyTorch's Cephes-based CPU kernel)."
    return public


airy_ai = _unary("airy_ai", _airy_ai, "x")
bessel_j0 = _unary("bessel_j0", _j0, "self")
bessel_j1 = _unary("bessel_j1", _j1, "self")
bessel_y0 = _unary("bessel_y0", _y0, "self")
bessel_y1 = _unary("bessel_y1", _y1, "self")
modified_bessel_i0 = _unary("modified_bessel_i0", _i0, "self")
modified_bessel_i1 = _unary("modified_bessel_i1", _i1, "self")
modified_bessel_k0 = _unary("modified_bessel_k0", _k0, "self")
modified_bessel_k1 = _unary("modified_bessel_k1", _k1, "self")
scaled_modified_bessel_k0 = _unary("scaled_modified_bessel_k0", _k0e, "x")
scaled_modified_bessel_k1 = _unary("scaled_modified_bessel_k1", _k1e, "x")
spherical_bessel_j0 = _unary("spherical_bessel_j0", _spherical_j0, "x")

PUBLIC: dict = {}
METHODS: dict = {}
