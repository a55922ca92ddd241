"""Review of torch.bfloat16 against torch 2.13: 0-dim results, torch.tensor of Python numbers, the kernels' own dtype
checks (which see float32 copies of bfloat16 operands), finfo-dependent kernels and non-operand arrays."""

from __future__ import annotations

import pytest
from _lib import np, tg, torch

pytestmark = pytest.mark.usefixtures("one_thread")


def _outcome(program, lib):
    """A program's result as (dtype, shape, raw bits) per tensor, or its error as (type, message)."""
    try:
        value = program(lib)
    except Exception as e:  # noqa: BLE001 - the error is the outcome compared
        return type(e).__name__, str(e).split("\n")[0]
    values = value if isinstance(value, (list, tuple)) else [value]
    out = []
    for v in values:
        if hasattr(v, "detach"):
            v = v.detach()
            raw = v.view(lib.int16) if v.dtype is lib.bfloat16 else v
            out.append((str(v.dtype), tuple(v.shape), raw.numpy().tobytes()))
        else:
            out.append(v)
    return out


def _same(program) -> None:
    torch.manual_seed(0)
    theirs = _outcome(program, torch)
    tg.manual_seed(0)
    assert _outcome(program, tg) == theirs


def _bf(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float32)).bfloat16()


def test_zero_dim_results_stay_bfloat16():
    def program(lib):
        a, b = _bf(lib, 1.5), _bf(lib, 1.1)
        return [a + b, a * b, a.exp(), -a, a + 1, lib.add(a, b), a / b]

    _same(program)


def test_loss_of_cross_entropy_plus_conv_sum_is_bfloat16():
    def program(lib):
        x = _bf(lib, np.random.RandomState(0).randn(2, 3, 5, 5))
        w = _bf(lib, np.random.RandomState(1).randn(4, 3, 3, 3)).requires_grad_()
        scores = _bf(lib, np.random.RandomState(2).randn(2, 4)).requires_grad_()
        loss = lib.nn.functional.cross_entropy(scores, lib.tensor([1, 3])) + lib.nn.functional.conv2d(x, w).sum()
        loss.backward()
        return [loss, str(scores.grad.dtype), str(w.grad.dtype)]  # (the gradients' values: a bfloat16 ulp apart at places)

    _same(program)


@pytest.mark.parametrize("data", [1.5, 3, True, 2**70, [2**70, 2**64 - 1], [1 + 2j], 1 + 2j, [0.1, 1 / 3]],
                         ids=repr)
def test_tensor_of_python_numbers(data):
    _same(lambda lib: lib.tensor(data, dtype=lib.bfloat16))


_CHECKED = {
    "inv_low_precision": lambda lib, a: lib.linalg.inv(a),
    "det_lu_cpu": lambda lib, a: lib.linalg.det(a),
    "cholesky": lambda lib, a: lib.linalg.cholesky(a @ a.mT + 3 * lib.eye(3, dtype=lib.bfloat16)),
    "nuclear_norm": lambda lib, a: lib.linalg.matrix_norm(a, "nuc"),
    "fro_norm": lambda lib, a: lib.linalg.norm(a),
    "matrix_norm_inf": lambda lib, a: lib.linalg.matrix_norm(a, float("inf")),
    "cosine_similarity": lambda lib, a: lib.nn.functional.cosine_similarity(a, a.flip(0)),
    "cross_entropy_probs": lambda lib, a: lib.nn.functional.cross_entropy(a, a.softmax(1)),
    "max_pool1d": lambda lib, a: lib.nn.functional.max_pool1d(a[None], 2),
    "adaptive_avg_pool2d": lambda lib, a: lib.nn.functional.adaptive_avg_pool2d(a[None], (2, 2)),
    "adaptive_avg_pool3d": lambda lib, a: lib.nn.functional.adaptive_avg_pool3d(a[None, None], (1, 2, 2)),
    "fft": lambda lib, a: lib.fft.fft(a),
    "rfft": lambda lib, a: lib.fft.rfft(a),
    "nan_to_num": lambda lib, a: lib.nan_to_num(a.log()),
    "softshrink_bound": lambda lib, a: lib.nn.functional.softshrink(a, 1e39),
}


@pytest.mark.parametrize("name", list(_CHECKED))
def test_kernel_checks_see_bfloat16(name):
    _same(lambda lib: _CHECKED[name](lib, _bf(lib, [[0.5, -1.25, 2.0], [0.0, 1.5, -0.75], [3.0, 0.25, 1.0]])))


def test_logcumsumexp_backward():
    def program(lib):
        x = _bf(lib, [[0.5, -1.25, 2.0], [0.0, 1.5, -0.75]]).requires_grad_()
        (lib.logcumsumexp(x, 1) * _bf(lib, [[1.0, -2.0, 0.5], [0.0, 1.0, -1.0]])).sum().backward()
        return x.grad

    _same(program)


@pytest.mark.parametrize("name", ["i1", "i1e"])
def test_bessel_backward_refused(name):
    def program(lib):
        x = _bf(lib, [0.5, -1.25, 2.0]).requires_grad_()
        getattr(lib.special, name)(x).sum().backward()
        return x.grad

    _same(program)
