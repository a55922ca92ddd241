"""Differences that the programs of ``tests/test_user_programs9_vs_torch.py`` ran into, each reduced to the
operation that caused it and compared with torch.

- ``scaled_dot_product_attention`` of half and bfloat16 inputs (a GPT under bfloat16 autocast) was a rounding or
  two off: PyTorch's fused CPU kernel rounds the softmax's numerators to the inputs' dtype before the product with
  value and divides by their float sum after, and its backward rounds the weights, their gradients and each
  accumulated gradient (a shared key head of grouped-query attention sums its query heads one after another);
  bfloat16 took the composite path (``UnsafeViewBackward0``) where torch runs the fused kernel;
- the fused kernel's logsumexp of a fully masked row was -inf where torch gives 0.

The shapes stay below the kernel's vector width: longer rows take a vectorised exp (``exp_u20``) that is not
NumPy's (see the program file's "Left:"). Half's causal grouped-query case is left out: there a row attending to
one key gets a query gradient of ``g . v - g . out`` that torch's two orders of summation cancel to 0 and
tracegrad's leave at a subnormal or two.
"""

from __future__ import annotations

import numpy as np
import pytest
from _lib import assert_same_bits, tg, torch

_CASES = {
    "plain": ((2, 2, 6, 4), (2, 2, 6, 4), {}),
    "causal": ((2, 2, 6, 4), (2, 2, 6, 4), {"is_causal": True}),
    "gqa": ((1, 4, 5, 8), (1, 2, 5, 8), {"enable_gqa": True}),
    "gqa_causal": ((1, 4, 5, 8), (1, 2, 5, 8), {"enable_gqa": True, "is_causal": True}),  # (bfloat16 only)
    "bool_mask": ((2, 2, 6, 4), (2, 2, 6, 4), {"attn_mask": "bool"}),
    "cross": ((1, 2, 3, 4), (1, 2, 7, 4), {}),
}


def _attention(lib, dtype: str, case: str, seed: int = 0) -> list:
    """The output and the three gradients (as float32 arrays), and the output's grad_fn name."""
    q_shape, kv_shape, options = _CASES[case]
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in (q_shape, kv_shape, kv_shape, q_shape)]
    q, k, v = (lib.from_numpy(a).to(getattr(lib, dtype)).requires_grad_() for a in arrays[:3])
    if options.get("attn_mask") == "bool":
        options = {"attn_mask": lib.from_numpy(rng.random((q_shape[2], kv_shape[2])) > 0.3)}
    out = lib.nn.functional.scaled_dot_product_attention(q, k, v, **options)
    out.backward(lib.from_numpy(arrays[3]).to(out.dtype))
    return [out.grad_fn.name(), *(t.detach().float().numpy() for t in (out, q.grad, k.grad, v.grad))]


@pytest.mark.parametrize("case", sorted(_CASES))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_reduced_precision_attention_is_torchs_bit_for_bit(dtype, case, one_thread):
    if (dtype, case) == ("float16", "gqa_causal"):
        pytest.skip("a query gradient that torch's orders of summation cancel to 0 (see the module docstring)")
    ours, theirs = _attention(tg, dtype, case), _attention(torch, dtype, case)
    assert ours[0] == theirs[0] == "ScaledDotProductFlashAttentionForCpuBackward0"
    for a, b in zip(ours[1:], theirs[1:]):
        assert_same_bits(a, b)


def _masked_logsumexp(lib) -> np.ndarray:
    q = lib.arange(6, dtype=lib.float32).reshape(1, 1, 3, 2) / 4
    mask = lib.tensor([[0.0, 0.0, 0.0], [float("-inf")] * 3, [0.0, float("-inf"), 0.0]])
    return lib.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, q, q, attn_mask=mask)[1].numpy()


def test_logsumexp_of_a_fully_masked_row_is_zero():
    ours, theirs = _masked_logsumexp(tg), _masked_logsumexp(torch)
    assert theirs[0, 0, 1] == 0
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
