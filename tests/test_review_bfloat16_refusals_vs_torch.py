"""Review of the bfloat16 refusals (ops/bfloat16_in_float.REFUSED) against torch: where torch's dtype check sits
among an operator's argument checks (cdist's empty results, lu's pivot, multi_margin's target values, pinv's atol
alone); the dtype checks between two operands that the kernels' float32 copies hid (triangular_solve, lstsq, which
compares them before it refuses a dtype, lu_solve, multi_margin's weight); the messages naming 'BFloat16' where
the kernels named the copies' 'Float' (bitwise operators, shifts, gcd, lcm, bincount, repeat_interleave, take,
put_, index_add, index_copy, embedding, embedding_bag, nll_loss, the margin losses' targets): a kernel's message
names an array by the dtype it stands for. Also histc's bins in bfloat16 arithmetic and DLPack of bfloat16."""

from __future__ import annotations

import pytest
from _lib import bits_or_error, np, tg, torch

pytestmark = [pytest.mark.usefixtures("one_thread"), pytest.mark.filterwarnings("ignore")]


def _bf(lib, *shape, seed=0, shift=0.0):
    return lib.tensor((np.random.RandomState(seed).randn(*shape) + shift).astype(np.float32)).bfloat16()


def _square(lib, seed=0):
    return lib.tensor((np.random.RandomState(seed).randn(3, 3) + 3 * np.eye(3)).astype(np.float32)).bfloat16()


def _ints(lib, *values):
    return lib.tensor(list(values))


ORDER = {
    # cdist's and pdist's empty (or zero-column) results come before the dtype dispatch
    "cdist of no rows": lambda L: L.cdist(_bf(L, 0, 4), _bf(L, 5, 4, seed=1)),
    "cdist of no rows in x2": lambda L: L.cdist(_bf(L, 3, 4), _bf(L, 0, 4)),
    "cdist of no columns": lambda L: L.cdist(_bf(L, 3, 0), _bf(L, 5, 0)),
    "cdist p=1 of no rows": lambda L: L.cdist(_bf(L, 0, 4), _bf(L, 5, 4), p=1.0),
    "cdist float32 and bfloat16": lambda L: L.cdist(_bf(L, 3, 4).float(), _bf(L, 5, 4, seed=1)),
    "pdist of no columns": lambda L: L.nn.functional.pdist(_bf(L, 4, 0)),
    # lu dispatches on the dtype before its pivot check
    "lu_factor_ex pivot=False": lambda L: L.linalg.lu_factor_ex(_square(L), pivot=False),
    "linalg.lu pivot=False": lambda L: L.linalg.lu(_square(L), pivot=False),
    # multi_margin_loss dispatches before it reads the target's values
    "multi_margin_loss target out of range": lambda L: L.nn.functional.multi_margin_loss(
        _bf(L, 3, 4), L.tensor([0, 5, 1])),
    "multi_margin_loss float32 input, bfloat16 weight": lambda L: L.nn.functional.multi_margin_loss(
        _bf(L, 3, 4).float(), L.tensor([0, 3, 1]), weight=_bf(L, 4)),
    # two operands of different dtypes (the float32 copy of one hid it)
    "triangular_solve float32 A, bfloat16 b": lambda L: L.triangular_solve(_square(L), _square(L, 1).float()),
    "lstsq float32 and bfloat16": lambda L: L.linalg.lstsq(_square(L).float(), _square(L, 1)),
    "lstsq bfloat16 and float32": lambda L: L.linalg.lstsq(_square(L), _square(L, 1).float()),
    "lstsq int64 and float32": lambda L: L.linalg.lstsq(L.ones(3, 3, dtype=L.int64), L.ones(3, 3)),
    "lstsq float16 and float32": lambda L: L.linalg.lstsq(L.ones(3, 3, dtype=L.float16), L.ones(3, 3)),
    "lstsq float16": lambda L: L.linalg.lstsq(L.ones(3, 3, dtype=L.float16), L.ones(3, 3, dtype=L.float16)),
    "lstsq bfloat16": lambda L: L.linalg.lstsq(_square(L), _square(L, 1)),
    "lu_solve float32 LU, bfloat16 B": lambda L: L.linalg.lu_solve(*L.linalg.lu_factor(_square(L).float()),
                                                                   _square(L)),
    # pinv's overload of number tolerances computes the default rtol of an atol alone first (any dtype)
    "pinv atol": lambda L: L.linalg.pinv(_square(L), atol=0.1),
    "pinv atol 1-d": lambda L: L.linalg.pinv(_bf(L, 3), atol=0.1),
    "pinv atol 1-d float32": lambda L: L.linalg.pinv(_bf(L, 3).float(), atol=0.1),
    "pinv atol 0-d float32": lambda L: L.linalg.pinv(L.tensor(1.0), atol=0.1),
    "pinv atol int64": lambda L: L.linalg.pinv(L.ones(3, 3, dtype=L.int64), atol=0.1),
    "pinv atol float16": lambda L: L.linalg.pinv(L.ones(3, 3, dtype=L.float16), atol=0.1),
    "pinv atol complex64": lambda L: str(L.linalg.pinv(L.eye(3, dtype=L.complex64), atol=0.1).dtype),
    "pinv atol and rtol": lambda L: L.linalg.pinv(_bf(L, 3), atol=0.1, rtol=0.1),
    "pinv atol tensor": lambda L: L.linalg.pinv(_square(L), atol=L.tensor(0.1)),
    "pinv rtol": lambda L: L.linalg.pinv(_square(L), rtol=0.1),
    "pinv": lambda L: L.linalg.pinv(_square(L)),
}

MESSAGES = {
    "&": lambda L: _bf(L, 3) & _bf(L, 3),
    "bitwise_and with int64": lambda L: L.bitwise_and(_bf(L, 3), _ints(L, 1, 2, 3)),
    "bitwise_or": lambda L: L.bitwise_or(_bf(L, 3), _bf(L, 3)),
    "bitwise_xor": lambda L: L.bitwise_xor(_bf(L, 3), _bf(L, 3)),
    "bitwise_not": lambda L: L.bitwise_not(_bf(L, 3)),
    "~": lambda L: ~_bf(L, 3),
    "<<": lambda L: _bf(L, 3) << 1,
    ">>": lambda L: _bf(L, 3) >> 1,
    "bitwise_left_shift": lambda L: L.bitwise_left_shift(_bf(L, 3), _bf(L, 3)),
    "bitwise_right_shift": lambda L: L.bitwise_right_shift(_bf(L, 3), 1),
    "__iand__": lambda L: _bf(L, 3).__iand__(_bf(L, 3)),
    "bitwise_and_": lambda L: _bf(L, 3).bitwise_and_(_bf(L, 3)),
    "gcd": lambda L: L.gcd(_bf(L, 3), _bf(L, 3)),
    "lcm": lambda L: L.lcm(_bf(L, 3), _bf(L, 3)),
    "gcd_": lambda L: _bf(L, 3).gcd_(_bf(L, 3)),
    "bincount": lambda L: L.bincount(_bf(L, 3)),
    "repeat_interleave": lambda L: L.repeat_interleave(_bf(L, 3)),
    "repeat_interleave repeats": lambda L: L.repeat_interleave(_ints(L, 1, 2, 3), _bf(L, 3)),
    "take": lambda L: L.take(_bf(L, 3), _bf(L, 2)),
    "take of int64, bfloat16 index": lambda L: L.take(_ints(L, 1, 2, 3), _bf(L, 2)),
    "take of float32, bfloat16 index": lambda L: L.take(L.ones(3), _bf(L, 2)),
    "put_": lambda L: L.ones(3).put_(_bf(L, 2), L.ones(2)),
    "index_add bfloat16 index": lambda L: L.ones(3).index_add(0, _bf(L, 2), L.ones(2)),
    "index_copy bfloat16 index": lambda L: L.ones(3).index_copy(0, _bf(L, 2), L.ones(2)),
    "embedding": lambda L: L.nn.functional.embedding(_bf(L, 3), L.ones(4, 2)),
    "embedding of a bfloat16 weight": lambda L: L.nn.functional.embedding(_bf(L, 3), _bf(L, 4, 2)),
    "embedding float16 indices": lambda L: L.nn.functional.embedding(L.ones(3, dtype=L.float16), L.ones(4, 2)),
    "embedding bool indices": lambda L: L.nn.functional.embedding(L.ones(3, dtype=L.bool), L.ones(4, 2)),
    "embedding_bag": lambda L: L.nn.functional.embedding_bag(_bf(L, 3), L.ones(4, 2), _ints(L, 0)),
    "embedding_bag 2-d": lambda L: L.nn.functional.embedding_bag(_bf(L, 1, 3), L.ones(4, 2)),
    "nll_loss": lambda L: L.nn.functional.nll_loss(_bf(L, 3, 4), _bf(L, 3)),
    "cross_entropy": lambda L: L.nn.functional.cross_entropy(_bf(L, 3, 4), _bf(L, 3)),
    "nll_loss2d": lambda L: L.nn.functional.nll_loss(_bf(L, 2, 4, 3, 3), _bf(L, 2, 3, 3)),
    "multi_margin_loss bfloat16 target": lambda L: L.nn.functional.multi_margin_loss(L.ones(3, 4), _bf(L, 3)),
    "multilabel_margin_loss bfloat16 target": lambda L: L.nn.functional.multilabel_margin_loss(
        L.ones(2, 4), _bf(L, 2, 4)),
    "max_unpool1d bfloat16 indices": lambda L: L.nn.functional.max_unpool1d(L.ones(1, 1, 2), _bf(L, 1, 1, 2), 2),
    "view_as_complex int64": lambda L: L.view_as_complex(L.ones(3, 2, dtype=L.int64)),
}


@pytest.mark.parametrize("name", ORDER)
def test_checks_in_torch_order(name):
    assert bits_or_error(ORDER[name], tg) == bits_or_error(ORDER[name], torch)


@pytest.mark.parametrize("name", MESSAGES)
def test_messages_name_bfloat16(name):
    assert bits_or_error(MESSAGES[name], tg) == bits_or_error(MESSAGES[name], torch)


# histc bins bfloat16 (and float16) in the input's own arithmetic, each step rounded, and counts one at a time in
# it: a count stops at 256 in bfloat16 (2048 in float16), as one thread of ATen's kernel counts
HISTC = {
    "100 bins": lambda L: L.histc(_bf(L, 1000), 100),
    "13 bins of a wide range": lambda L: L.histc(_bf(L, 1000) * 100, 13),
    "a count past 256": lambda L: L.histc(_bf(L, 1000), 2),
    "257 bins (not a bfloat16 number)": lambda L: L.histc(_bf(L, 3000), 257),
    "a given range": lambda L: L.histc(_bf(L, 1000), 7, -1, 2.3),
    "out=": lambda L: L.histc(_bf(L, 100), 7, out=L.empty(7, dtype=L.bfloat16)),
    "float16, a count past 2048": lambda L: L.histc(L.tensor(np.random.RandomState(0).randn(5000)).half(), 2),
    "float32": lambda L: L.histc(_bf(L, 1000).float() * 100, 13),
}


@pytest.mark.parametrize("name", HISTC)
def test_histc_bins_in_the_input_dtype(name):
    assert bits_or_error(HISTC[name], tg) == bits_or_error(HISTC[name], torch)


# DLPack of bfloat16 (kDLBfloat, code 4, 16 bits), which NumPy's DLPack refuses: tracegrad sends and takes it as
# torch does, through either form of capsule, sharing the memory (a write shows through on the other side)
def _bits(t) -> bytes:
    return t.view(torch.int16 if isinstance(t, torch.Tensor) else tg.int16).numpy().tobytes()


def _torch_bf16():
    return torch.tensor([1.5, -2.25, 3.0, 0.1]).bfloat16()[::2]


def _tg_bf16():
    return tg.tensor([1.5, -2.25, 3.0, 0.1]).bfloat16()[1:]


DLPACK_TO_TG = {
    "tracegrad.from_dlpack(torch tensor)": lambda t: tg.from_dlpack(t),
    "utils.dlpack.from_dlpack(torch capsule)": lambda t: tg.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t)),
    "from_dlpack(torch versioned capsule)": lambda t: tg.from_dlpack(t.__dlpack__(max_version=(1, 0))),
}
DLPACK_TO_TORCH = {
    "torch.from_dlpack(tracegrad tensor)": lambda x: torch.from_dlpack(x),
    "torch from_dlpack(to_dlpack capsule)": lambda x: torch.utils.dlpack.from_dlpack(tg.utils.dlpack.to_dlpack(x)),
    "torch from_dlpack(versioned capsule)": lambda x: torch.from_dlpack(x.__dlpack__(max_version=(1, 0))),
    "tracegrad from_dlpack(tracegrad capsule)": lambda x: tg.utils.dlpack.from_dlpack(tg.utils.dlpack.to_dlpack(x)),
}


@pytest.mark.parametrize("name", DLPACK_TO_TG)
def test_dlpack_bfloat16_into_tracegrad(name):
    t = _torch_bf16()
    x = DLPACK_TO_TG[name](t)
    assert x.dtype is tg.bfloat16 and x.shape == t.shape and _bits(x) == _bits(t)
    x[0] = 7
    assert t[0].item() == 7.0  # (the memory is shared)


@pytest.mark.parametrize("name", DLPACK_TO_TORCH)
def test_dlpack_bfloat16_out_of_tracegrad(name):
    x = _tg_bf16()
    t = DLPACK_TO_TORCH[name](x)
    assert t.dtype in (torch.bfloat16, tg.bfloat16) and tuple(t.shape) == tuple(x.shape) and _bits(t) == _bits(x)
    t[0] = 5
    assert x[0].item() == 5.0


def test_dlpack_bfloat16_copy():
    t = _torch_bf16()
    x = tg.from_dlpack(t, copy=True)
    x[0] = -1
    assert t[0].item() == 1.5 and x.dtype is tg.bfloat16
