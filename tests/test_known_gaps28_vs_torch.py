"""Known gaps against torch 2.13, round 28: ``torch.load`` of files that are no checkpoint (the error's type and
whole message, weights-only or not), ``mode(out=)``'s resize warning (ATen's compare_base_kernel_core unsqueezes
every out of at least ``dim`` dims), ``cholesky_inverse`` of a factor with a zero on its diagonal (torch's
LinAlgError, where tracegrad returned NaNs), the NaN bits of ``log1p``, and the NaN bits
of bfloat16 results (0xffff from ATen's vector conversion, 0x7fc0 from its scalar one). Each program runs on both
libraries."""

from __future__ import annotations

import io
import pickle
import warnings
import zipfile

import pytest

from tests._lib import assert_close, raised, tg, torch, warning_texts

# ---- torch.load of what is no checkpoint --------------------------------------------------------------------------


def _legacy_checkpoint() -> bytes:
    buffer = io.BytesIO()
    torch.save({"a": torch.arange(3.0)}, buffer, _use_new_zipfile_serialization=False)
    return buffer.getvalue()


def _zip_of(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(name, "3\n")
    return buffer.getvalue()


NOT_CHECKPOINTS = {
    "random bytes": lambda: bytes((i * 97 + 95) % 256 for i in range(200)),
    "text": lambda: b"hello world\nthis is text\n",
    "json": lambda: b'{"a": 1}',
    "zeros": lambda: bytes(64),
    "html": lambda: b"<!DOCTYPE html><html></html>",
    "one protocol byte": lambda: b"\x80",
    "legacy checkpoint cut in half": lambda: _legacy_checkpoint()[:len(_legacy_checkpoint()) // 2],
    "legacy checkpoint cut in its magic number": lambda: _legacy_checkpoint()[:10],
    "legacy magic number only": lambda: pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2),
    "zip without version nor data.pkl": lambda: _zip_of(["archive/foo.txt"]),
    "zip with data.pkl, no version": lambda: _zip_of(["archive/data.pkl"]),
    "zip with a version, no data.pkl": lambda: _zip_of(["archive/version"]),
}


@pytest.mark.parametrize("weights_only", [True, False, None])
@pytest.mark.parametrize("case", NOT_CHECKPOINTS)
def test_load_of_what_is_no_checkpoint_fails_as_torch(case, weights_only, tmp_path):
    path = tmp_path / "file.pt"
    path.write_bytes(NOT_CHECKPOINTS[case]())
    kwargs = {} if weights_only is None else {"weights_only": weights_only}

    def program(L):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (torch warns of a pickle protocol other than 2)
            return L.load(path, **kwargs)

    expected = raised(torch, program)
    assert expected is not None
    assert raised(tg, program) == expected


# ---- mode(out=) -------------------------------------------------------------------------------------------------

MODE_CASES = [  # (input shape, dim, keepdim, values' out shape, indices' out shape)
    ((3, 4), 1, False, (1,), (2,)),
    ((3, 4), 1, False, (3, 1), (3, 1)),
    ((3, 4), 0, False, (), ()),
    ((2, 3, 4), 2, False, (), (5,)),
    ((2, 3, 4), 0, False, (2, 2), (1,)),
    ((3, 4), 1, True, (3, 1), (3,)),
    ((), 0, False, (2,), ()),
    ((1,), 0, False, (2, 2), ()),
    ((3, 4), -1, False, (3,), (3,)),
]


@pytest.mark.parametrize("shape, dim, keepdim, values_shape, indices_shape", MODE_CASES)
def test_mode_out_resizes_as_torch(shape, dim, keepdim, values_shape, indices_shape):
    def program(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x = L.arange(float(max(1, L.zeros(shape).numel()))).reshape(shape) % 3
            values, indices = L.zeros(values_shape), L.zeros(indices_shape, dtype=L.long)
            L.mode(x, dim, keepdim, out=(values, indices))
        return ([(tuple(t.shape), t.stride(), t.tolist()) for t in (values, indices)], warning_texts(caught))

    assert program(tg) == program(torch)


# ---- cholesky_inverse of a singular factor ----------------------------------------------------------------------

SINGULAR_FACTORS = {
    "last diagonal zero": [[1.0, 0.0], [3.0, 0.0]],
    "all zero": [[0.0, 0.0], [0.0, 0.0]],
    "batch, second singular": [[[1.0, 0.0], [0.0, 2.0]], [[1.0, 0.0], [3.0, 0.0]]],
    "batch, both singular": [[[0.0, 0.0], [1.0, 2.0]], [[1.0, 0.0], [3.0, 0.0]]],
}


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("case", SINGULAR_FACTORS)
def test_cholesky_inverse_of_a_singular_factor_raises_as_torch(case, upper):
    def program(L):
        return L.cholesky_inverse(L.tensor(SINGULAR_FACTORS[case], dtype=L.float64), upper=upper)

    expected = raised(torch, program)
    assert expected is not None and expected[0] == "_LinAlgError"
    assert raised(tg, program) == expected


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_inverse_of_a_negative_diagonal_computes_as_torch(upper):
    def program(L):
        factor = L.tensor([[-1.0, 0.5], [0.25, 2.0]], dtype=L.float64, requires_grad=True)
        result = L.cholesky_inverse(factor, upper=upper)
        result.sum().backward()
        return result, factor.grad

    assert_close(program(tg), program(torch), rtol=1e-12, atol=0)


# ---- NaN bits of log1p ------------------------------------------------------------------------------------------

LOG_INPUTS = [-1.0, float("-inf"), -2.5, float("nan"), -0.0, 3.0, -5.0, -float("nan"), -1e-30, 0.5]
BITS = {"float32": "int32", "float64": "int64", "float16": "int16"}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", ["log1p", "log1p_"])
@pytest.mark.parametrize("size", [1, 10, 40])
def test_log1p_nan_bits_as_torch(op, dtype, size):
    def program(L):
        x = L.tensor((LOG_INPUTS * 4)[:size], dtype=getattr(L, dtype))
        result = getattr(x, op)() if op.endswith("_") else getattr(L, op)(x)
        return result.view(getattr(L, BITS[dtype])).tolist()

    assert program(tg) == program(torch)


# ---- NaN bits of bfloat16 results ---------------------------------------------------------------------------------

BFLOAT16_NANS = {
    "sqrt of negatives": lambda L, n: (-L.ones(n, dtype=L.bfloat16)).sqrt(),
    "log of negatives": lambda L, n: L.log(-L.ones(n, dtype=L.bfloat16)),
    "log1p below -1": lambda L, n: L.log1p(L.full((n,), -3.0, dtype=L.bfloat16)),
    "0 / 0": lambda L, n: L.zeros(n, dtype=L.bfloat16) / L.zeros(n, dtype=L.bfloat16),
    "0 / number 0": lambda L, n: L.zeros(n, dtype=L.bfloat16) / 0,
    "inf - inf": lambda L, n: L.full((n,), float("inf"), dtype=L.bfloat16) - L.full((n,), float("inf"),
                                                                                    dtype=L.bfloat16),
    "inf * 0": lambda L, n: L.full((n,), float("inf"), dtype=L.bfloat16) * L.zeros(n, dtype=L.bfloat16),
    "erfinv_ out of range": lambda L, n: L.full((n,), -2.0, dtype=L.bfloat16).erfinv_(),
    "rsqrt of negatives": lambda L, n: (-L.ones(n, dtype=L.bfloat16)).rsqrt(),
    "div_ by 0": lambda L, n: L.zeros(n, dtype=L.bfloat16).div_(0),
    "broadcast rows": lambda L, n: L.zeros(3, n, dtype=L.bfloat16) / L.zeros(n, dtype=L.bfloat16),
    "transposed": lambda L, n: L.zeros(3, n, dtype=L.bfloat16).t() / 0,
    # (a strided operand: ATen's loop runs scalar code on every element, where the float32 copy is contiguous)
    "every other element * 0": lambda L, n: L.full((n, 2), float("inf"), dtype=L.bfloat16)[:, 0] * 0,
    # (round's decimals overload is a scalar cpu_kernel, where round itself is a vml one)
    "round(decimals=1) of NaN": lambda L, n: L.full((n,), float("nan"), dtype=L.bfloat16).round(decimals=1),
    "round_(decimals=-1) of NaN": lambda L, n: L.full((n,), float("nan"), dtype=L.bfloat16).round_(decimals=-1),
}

# 0-d results: NumPy gives scalars there, not arrays
BFLOAT16_0D_NANS = {
    "sqrt": lambda L: L.tensor(-1.0, dtype=L.bfloat16).sqrt(),
    "log": lambda L: L.log(L.tensor(-1.0, dtype=L.bfloat16)),
    "0 / 0": lambda L: L.tensor(0.0, dtype=L.bfloat16) / L.tensor(0.0, dtype=L.bfloat16),
    "0 / number 0": lambda L: L.tensor(0.0, dtype=L.bfloat16) / 0,
    "rsqrt": lambda L: L.tensor(-1.0, dtype=L.bfloat16).rsqrt(),
    "inf * 0": lambda L: L.tensor(float("inf"), dtype=L.bfloat16) * 0,
}


@pytest.mark.parametrize("size", [4, 32, 33, 70])
@pytest.mark.parametrize("case", BFLOAT16_NANS)
def test_bfloat16_nan_bits_as_torch(case, size):
    def program(L):
        return BFLOAT16_NANS[case](L, size).view(L.int16).tolist()

    assert program(tg) == program(torch)


@pytest.mark.parametrize("case", BFLOAT16_0D_NANS)
def test_bfloat16_nan_bits_of_0d_results_as_torch(case):
    def program(L):
        return BFLOAT16_0D_NANS[case](L).view(L.int16).item()

    assert program(tg) == program(torch)
