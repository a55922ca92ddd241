"""nn.functional.scaled_dot_product_attention, in both of PyTorch's CPU back ends: the fused kernel (4-D
inputs, no dropout, a mask without grad: no second derivative, no forward-mode formula, like torch's) and the
composite math path (other ranks, a mask that requires grad, unequal head sizes), which differentiates twice."""

from __future__ import annotations

from .core import Maker, OpInfo, SampleInput

SDPA = "nn.functional.scaled_dot_product_attention"
_TOL = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}


def _fused_samples(m: Maker):
    yield SampleInput("plain", (m(2, 3, 4, 5), m(2, 3, 6, 5), m(2, 3, 6, 5)))
    yield SampleInput("bool_mask_scale", (m(1, 2, 3, 4), m(1, 2, 5, 4), m(1, 2, 5, 4)),
                      {"attn_mask": m(3, 5, dtype="bool", layout="T"), "scale": 0.3})
    yield SampleInput("grouped_heads_negative_scale", (m(1, 4, 3, 2), m(1, 2, 5, 2), m(1, 2, 5, 2)),
                      {"enable_gqa": True, "scale": -0.5})


def _math_samples(m: Maker):
    yield SampleInput("5d_float_mask", (m(2, 1, 2, 4, 5), m(2, 1, 2, 6, 5), m(2, 1, 2, 6, 5, layout="strided")),
                      {"attn_mask": m(4, 6)})
    yield SampleInput("2d_causal", (m(3, 4), m(5, 4), m(5, 2)), {"is_causal": True})
    # (a last dim that is not contiguous sends 4-D input down this path too)
    yield SampleInput("4d_transposed_query", (m(2, 3, 4, 5, layout="T"), m(2, 3, 6, 5), m(2, 3, 6, 5)))


OPS = [
    OpInfo(SDPA, _fused_samples, variant="fused_cpu", tol=_TOL, supports_gradgrad=False,
           gradgrad_skip_reason="torch's _scaled_dot_product_flash_attention_for_cpu_backward has no derivative "
                                "(tested in tests/nn/test_attention_vs_torch.py)"),
    OpInfo(SDPA, _math_samples, variant="math", tol=_TOL),
]
