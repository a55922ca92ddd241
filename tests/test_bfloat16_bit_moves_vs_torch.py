"""bfloat16 operators that only move data keep every bit pattern, as torch's kernels copy raw bits.

tracegrad computes bfloat16 on float32 copies and rounds back, which made every NaN ml_dtypes' quiet NaN (0xffff
came back as 0xffc0, payloads were dropped). The data-moving operators (ops/bfloat16_bit_moves.py) now run on int16
views: NaN signs and payloads, signalling NaNs, subnormals and -0.0 arrive as they were. Numbers they write are
converted as c10 converts a Scalar (any NaN: 0x7fc0; refused beyond bfloat16's range where torch refuses), and
calls that promote or accumulate still compute in float.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests._lib import bits_or_error, tg, torch

# 0xffff, NaN payloads (quiet and signalling), -NaN, 1.0, -0.0, the smallest subnormal, pi, inf, -1.0, 0x7fff...
_BITS = [-1, 0x7FC1, 0x7F81, -0x7F, 0x3F80, -0x8000, 1, 0x4049, 0x7F80, -0x3F80, 0x7FFF, -0x40]


def _bf16(lib, shape=(3, 4)):
    n = int(np.prod(shape))
    bits = lib.tensor([_BITS[i % len(_BITS)] for i in range(n)], dtype=lib.int16)
    return bits.reshape(shape).view(lib.bfloat16)


def _t(lib):  # (a transposed, non-contiguous operand of shape (3, 4))
    return _bf16(lib, (4, 3)).t()


def _mask(lib):
    return lib.tensor([[True, False, True, False]] * 3)


def _into(lib, call, shape):
    out = lib.empty(shape, dtype=lib.bfloat16)
    call(out)
    return out


_NAN = float("nan")

MOVES = {
    # copies
    "clone": lambda L: _bf16(L).clone(),
    "clone_strided": lambda L: _t(L).clone(),
    "clone_0d": lambda L: _bf16(L, ()).clone(),
    "clone_empty": lambda L: _bf16(L, (0, 4)).clone(),
    "contiguous": lambda L: _t(L).contiguous(),
    "movedim": lambda L: L.movedim(_bf16(L, (2, 3, 2)), 0, 2).contiguous(),
    "permute_copy": lambda L: L.permute_copy(_bf16(L, (2, 3, 2)), (2, 0, 1)),
    "reshape_strided": lambda L: _t(L).reshape(12),
    "copy_": lambda L: L.empty(3, 4, dtype=L.bfloat16).copy_(_t(L)),
    "copy_broadcast_0d": lambda L: L.empty(3, 4, dtype=L.bfloat16).copy_(_bf16(L, ())),
    "copy_into_strided": lambda L: _into(L, lambda o: o.t().copy_(_bf16(L)), (4, 3)),
    "to_copy": lambda L: _t(L).to(L.bfloat16, copy=True),
    "to_same": lambda L: _bf16(L).to(L.bfloat16),
    "bfloat16()": lambda L: _t(L).bfloat16(),
    "expand_contiguous": lambda L: _bf16(L, (2,))[None].expand(3, 2).contiguous(),
    "detach_copy": lambda L: L.detach_copy(_bf16(L)),
    "unfold_contiguous": lambda L: _bf16(L, (12,)).unfold(0, 3, 2).contiguous(),
    "unfold_copy": lambda L: L.unfold_copy(_bf16(L, (12,)), 0, 3, 2),
    "narrow_copy": lambda L: _t(L).narrow_copy(1, 1, 2),
    "narrow_copy_empty": lambda L: _bf16(L, (0, 4)).narrow_copy(1, 0, 2),
    # joins, flips, repeats
    "cat": lambda L: L.cat([_bf16(L), _t(L)]),
    "cat_dim1": lambda L: L.cat([_bf16(L), _t(L)], 1),
    "cat_out": lambda L: _into(L, lambda o: L.cat([_bf16(L), _t(L)], out=o), (6, 4)),
    "stack": lambda L: L.stack([_bf16(L), _t(L)], 1),
    "stack_0d": lambda L: L.stack([_bf16(L, ()), _bf16(L, ())]),
    "flip": lambda L: _bf16(L).flip(0),
    "flip_strided": lambda L: _t(L).flip(1),
    "flip_out": lambda L: _into(L, lambda o: L.flip(_bf16(L), (0, 1), out=o), (3, 4)),
    "rot90": lambda L: L.rot90(_bf16(L)),
    "roll": lambda L: _bf16(L).roll(1, 1),
    "roll_flat": lambda L: _t(L).roll(5),
    "repeat": lambda L: _t(L).repeat(2, 1, 2),
    "tile": lambda L: _bf16(L).tile((2,)),
    "repeat_interleave": lambda L: _t(L).repeat_interleave(2, 0),
    "repeat_interleave_tensor": lambda L: _bf16(L, (12,)).repeat_interleave(L.tensor([1, 0, 2] * 4)),
    # selections
    "index": lambda L: _bf16(L)[[1, 0]],
    "index_pairs": lambda L: _t(L)[L.tensor([0, 2]), L.tensor([1, 1])],
    "index_mask": lambda L: _bf16(L)[_mask(L)],
    "index_select": lambda L: _t(L).index_select(1, L.tensor([2, 0])),
    "index_select_out": lambda L: _into(L, lambda o: L.index_select(_bf16(L), 0, L.tensor([2]), out=o), (1, 4)),
    "masked_select": lambda L: _bf16(L).masked_select(_mask(L)),
    "take": lambda L: _t(L).take(L.tensor([0, 5, 11])),
    "embedding": lambda L: L.nn.functional.embedding(L.tensor([2, 0]), _t(L)),
    "diag": lambda L: _t(L).diag(),
    "diag_embed": lambda L: L.diag_embed(_bf16(L)),
    "diagflat": lambda L: L.diagflat(_bf16(L, (3,))),
    "block_diag": lambda L: L.block_diag(_bf16(L), _bf16(L, (2,))),
    "tril": lambda L: _bf16(L).tril(),
    "triu_strided": lambda L: _t(L).triu(1),
    "tril_": lambda L: _bf16(L).tril_(-1),
    "triu_empty": lambda L: _bf16(L, (0, 4)).triu(),
    # writes of tensors
    "where": lambda L: L.where(_mask(L), _bf16(L), _t(L)),
    "where_0d": lambda L: L.where(_mask(L), _bf16(L), _bf16(L, ())),
    "masked_scatter": lambda L: _bf16(L).masked_scatter(_mask(L), _t(L)),
    "masked_scatter_": lambda L: _bf16(L).masked_scatter_(_mask(L), _t(L)),
    "index_put": lambda L: _bf16(L).index_put((L.tensor([0, 2]),), _t(L)[:2]),
    "index_put_": lambda L: _bf16(L).index_put_((L.tensor([0, 2]), L.tensor([1, 1])), _bf16(L, ())),
    "setitem": lambda L: _setitem(_bf16(L), (slice(None), 1), _t(L)[:, 0]),
    "setitem_mask_nan": lambda L: _setitem(_bf16(L), _mask(L), _bf16(L, ())),
    "index_copy": lambda L: _bf16(L).index_copy(1, L.tensor([3, 0]), _t(L)[:, :2]),
    "put": lambda L: _bf16(L).put(L.tensor([0, 5]), _t(L)[0, :2]),
    "put_": lambda L: _bf16(L).put_(L.tensor([0, 5]), _t(L)[0, :2]),
    "fill_tensor": lambda L: _bf16(L).fill_(_bf16(L, ())),
    "select_scatter": lambda L: L.select_scatter(_bf16(L), _bf16(L, (4,)), 0, 1),
    "slice_scatter": lambda L: L.slice_scatter(_bf16(L), _t(L)[:, :2], 1, 0, 2),
    "diagonal_scatter": lambda L: L.diagonal_scatter(_bf16(L), _bf16(L, (3,))),
    # pads
    "pad": lambda L: L.nn.functional.pad(_bf16(L), (1, 2)),
    "pad_strided": lambda L: L.nn.functional.pad(_t(L), (1, 1, 1, 0), value=0.3),
    "pad_crop": lambda L: L.constant_pad_nd(_bf16(L), (1, -1)),
    "pad_circular": lambda L: L.nn.functional.pad(_bf16(L)[None], (1, 1), mode="circular"),
    "pad_reflect": lambda L: L.nn.functional.pad(_bf16(L)[None], (1, 1), mode="reflect"),
    "pixel_shuffle": lambda L: L.nn.functional.pixel_shuffle(_bf16(L, (1, 4, 1, 3)), 2),
    "channel_shuffle": lambda L: L.nn.functional.channel_shuffle(_bf16(L, (1, 4, 3)), 2),
}


def _setitem(t, key, value):
    t[key] = value
    return t


# Numbers written beside bfloat16 data: converted as c10 converts a Scalar (through float; any NaN 0x7fc0), refused
# beyond bfloat16's range where torch's conversion is checked (after the kernel's own argument checks)
FILLS = {
    "masked_fill": lambda L: _bf16(L).masked_fill(_mask(L), 0.1),
    "masked_fill_nan": lambda L: _bf16(L).masked_fill(_mask(L), -_NAN),
    "masked_fill_bf16_nan": lambda L: _t(L).masked_fill(_mask(L), _bf16(L, ())),
    "masked_fill_float_tensor": lambda L: _t(L).masked_fill(_mask(L), L.tensor(2.5)),
    "masked_fill_": lambda L: _t(L).masked_fill_(_mask(L), -3.3),
    "masked_fill_beyond": lambda L: _bf16(L).masked_fill(_mask(L), 3.3895314e38),
    "masked_fill_beyond_": lambda L: _bf16(L).masked_fill_(_mask(L), 1e300),
    "masked_fill_float_mask_first": lambda L: _bf16(L).masked_fill(L.ones(3, 4), 1e300),
    "masked_fill_big_int": lambda L: _bf16(L).masked_fill(_mask(L), 2**63 - 1),
    "where_number": lambda L: L.where(_mask(L), _bf16(L), 0.3),
    "where_number_first": lambda L: L.where(_mask(L), 1e10, _t(L)),
    "where_nan": lambda L: L.where(_mask(L), _bf16(L), -_NAN),
    "where_beyond": lambda L: L.where(_mask(L), _bf16(L), 1e300),
    "where_float_0d": lambda L: L.where(_mask(L), _bf16(L), L.tensor(-_NAN)),
    "where_promotes": lambda L: L.where(_mask(L), _bf16(L), L.ones(3, 4)),
    "where_0d_promotes": lambda L: L.where(_mask(L)[0, 0], _bf16(L, ()), L.tensor(1.5)),
    "index_fill": lambda L: _bf16(L).index_fill(1, L.tensor([3, 0]), -_NAN),
    "index_fill_beyond": lambda L: _bf16(L).index_fill(1, L.tensor([3, 0]), 1e300),
    "pad_value_nan": lambda L: L.nn.functional.pad(_bf16(L), (1, 0), value=-_NAN),
    "pad_value_beyond": lambda L: L.nn.functional.pad(_bf16(L), (1, 0), value=1e39),
    "fill_nan": lambda L: _bf16(L).fill_(-_NAN),
    "fill_beyond": lambda L: _bf16(L).fill_(1e300),
    "full_like_nan": lambda L: L.full_like(_bf16(L), -_NAN),
    "setitem_mask_number": lambda L: _setitem(_bf16(L), _mask(L), 0.7),
}


@pytest.mark.parametrize("name", list(MOVES))
def test_data_moves_keep_bits(name):
    program = MOVES[name]
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


@pytest.mark.parametrize("name", list(FILLS))
def test_numbers_written_as_c10_converts_them(name):
    program = FILLS[name]
    assert bits_or_error(program, tg) == bits_or_error(program, torch)


def _cat_gradient(L):
    x = _bf16(L).requires_grad_()
    L.cat([x, x.flip(0)]).backward(_bf16(L, (6, 4)))
    return x.grad


def test_gradients_moved_keep_bits():
    assert bits_or_error(_cat_gradient, tg) == bits_or_error(_cat_gradient, torch)


def test_in_place_move_returns_its_target():
    x = _bf16(tg)
    assert x.masked_scatter_(_mask(tg), _t(tg)) is x
    assert x.index_put_((tg.tensor([0]),), _bf16(tg, ())) is x


# Found in review: the values index_put_ writes through a lone mask (as masked_fill_ with value.item(), of any dtype
# and shape), integers as c10's checked conversion takes them (straight to float), a 0-d tensor operand cast as a
# copy casts it, and a one-element fill_ unchecked (infinity, integers through double)
_ROUNDS_ONCE = 2**60 + 2**52 + 2**36 + 1  # (straight to float: 0x5d81; through double first: 0x5d80)


def _zeros(lib, n=3):
    return lib.zeros(n, dtype=lib.bfloat16)


REVIEWED = {
    "index_put_mask_float_nan": lambda L: _bf16(L).index_put((_mask(L),), L.tensor(-_NAN)),
    "index_put_mask_float_shape_1": lambda L: _bf16(L).index_put((_mask(L),), L.tensor([0.1])),
    "index_put_mask_double_beyond": lambda L: _bf16(L).index_put((_mask(L),), L.tensor(1e300, dtype=L.float64)),
    "index_put_mask_double_just_beyond": lambda L: _bf16(L).index_put_((_mask(L),),
                                                                       L.tensor([3.3895314e38], dtype=L.float64)),
    "index_put_mask_int": lambda L: _bf16(L).index_put((_mask(L),), L.tensor(_ROUNDS_ONCE)),
    "setitem_mask_float_nan": lambda L: _setitem(_bf16(L), _mask(L), L.tensor(-_NAN)),
    "setitem_none_mask_double_beyond": lambda L: _setitem(_bf16(L), (slice(None), L.tensor([True, False] * 2)),
                                                          L.tensor(1e300, dtype=L.float64)),
    "masked_fill_int": lambda L: _zeros(L).masked_fill(L.tensor(True), _ROUNDS_ONCE),
    "masked_fill_int_tensor": lambda L: _zeros(L).masked_fill(L.tensor(True), L.tensor(_ROUNDS_ONCE)),
    "index_fill_int": lambda L: _zeros(L).index_fill(0, L.tensor([1]), _ROUNDS_ONCE),
    "fill_int": lambda L: _zeros(L).fill_(_ROUNDS_ONCE),
    "fill_int_tensor": lambda L: _zeros(L).fill_(L.tensor(_ROUNDS_ONCE)),
    "full_like_int": lambda L: L.full_like(_zeros(L), _ROUNDS_ONCE),
    "where_int": lambda L: L.where(L.tensor([True, False, False]), _zeros(L), _ROUNDS_ONCE),
    "where_int_tensor": lambda L: L.where(L.tensor([True, False, False]), _zeros(L), L.tensor(_ROUNDS_ONCE)),
    "pad_int": lambda L: L.nn.functional.pad(_zeros(L), (1, 0), value=_ROUNDS_ONCE),
    "fill_one_element_beyond": lambda L: _zeros(L, 1).fill_(1e300),
    "fill_0d_beyond": lambda L: _bf16(L, ()).fill_(1e300),
    "fill_one_element_int": lambda L: _zeros(L, 1).fill_(_ROUNDS_ONCE),
    "full_like_one_element_beyond": lambda L: L.full_like(_zeros(L, 1), -1e300),
    "masked_fill_one_element_beyond": lambda L: _zeros(L, 1).masked_fill(L.tensor([True]), 1e300),
}


@pytest.mark.parametrize("name", list(REVIEWED))
def test_reviewed_fills_as_torch(name):
    program = REVIEWED[name]
    assert bits_or_error(program, tg) == bits_or_error(program, torch)
