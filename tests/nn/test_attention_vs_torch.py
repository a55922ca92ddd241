"""scaled_dot_product_attention against torch: outputs, gradients (mask's too), the back end chosen (visible
as the graph: one ScaledDotProductFlashAttentionForCpuBackward0 node, or the math path's matmul / _safe_softmax
chain), second derivatives, forward AD, fully masked rows and errors.

Left out on purpose: torch's fused CPU kernel returns NaN for is_causal=True with a negative scale (its
running maximum starts at -inf and the causal cut-off meets the flipped scores); ours gives the attention
the math path gives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _lib import raised, recorded_graph, tg, torch, warning_texts

N_CASES = 160


def _draw(seed: int) -> dict:
    """One random call: shapes (2-D to 5-D, grouped heads), mask kind, causal, scale, dtype, layout."""
    rng = np.random.default_rng(seed)
    ndim = int(rng.choice([2, 3, 4, 4, 4, 5]))
    length, source, head, value_head = (int(x) for x in rng.integers(1, 6, 4))
    if rng.random() < 0.6:
        value_head = head
    batch = [int(x) for x in rng.integers(1, 4, ndim - 2)]
    q_heads = k_heads = batch[-1] if ndim >= 3 else None
    gqa = ndim == 4 and rng.random() < 0.3
    if gqa:
        k_heads = int(rng.choice([1, 2]))
        q_heads = k_heads * int(rng.integers(1, 4))
    q_shape = (*batch[:-1], q_heads, length, head) if ndim >= 3 else (length, head)
    k_shape = (*batch[:-1], k_heads, source, head) if ndim >= 3 else (source, head)
    v_shape = (*k_shape[:-1], value_head)
    mask_kind = str(rng.choice(["none", "none", "bool2", "bool4", "bool3", "float2", "float2_grad", "causal"]))
    scale = rng.choice([None, None, 0.7, -0.4])
    if mask_kind == "causal" and scale is not None and scale < 0:
        scale = 0.4  # torch's fused kernel returns NaN for a causal call with a negative scale: not copied
    return dict(
        q=rng.standard_normal(q_shape), k=rng.standard_normal(k_shape), v=rng.standard_normal(v_shape),
        mask_kind=mask_kind, mask_bool=rng.random((length, source)) < 0.75, mask_float=rng.standard_normal((length, source)),
        mask4_shape=(batch[0] if ndim == 4 and rng.random() < 0.5 else 1, 1, length, source),
        scale=None if scale is None else float(scale), dtype=str(rng.choice(["float64", "float32"])), gqa=gqa,
        transpose_query=ndim == 4 and rng.random() < 0.3)


def _run(lib, case: dict):
    dt = getattr(lib, case["dtype"])
    leaves = [lib.tensor(case[n], dtype=dt, requires_grad=True) for n in "qkv"]
    q, k, v = leaves
    if case["transpose_query"]:  # heads and length swapped in memory, as a projection's output often is
        q = lib.tensor(np.swapaxes(case["q"], 1, 2).copy(), dtype=dt, requires_grad=True)
        leaves[0] = q
        q = q.transpose(1, 2)
    kind, kwargs = case["mask_kind"], {}
    if kind == "causal":
        kwargs["is_causal"] = True
    elif kind.startswith("bool"):
        mask = lib.tensor(case["mask_bool"])
        kwargs["attn_mask"] = {"bool2": mask, "bool3": mask.unsqueeze(0),
                               "bool4": mask.expand(case["mask4_shape"])}[kind]
    elif kind.startswith("float"):
        mask = lib.tensor(case["mask_float"], dtype=dt, requires_grad=kind.endswith("grad"))
        if mask.requires_grad:
            leaves.append(mask)
        kwargs["attn_mask"] = mask
    try:
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, scale=case["scale"], enable_gqa=case["gqa"],
                                                             **kwargs)
    except RuntimeError as exc:
        return "error", str(exc)
    grads = lib.autograd.grad(out, leaves, lib.ones_like(out) * 0.5 + out.detach() * 0.1)
    return out, grads, recorded_graph([out])


@pytest.mark.parametrize("seed", range(N_CASES))
def test_attention_as_torch(seed):
    case = _draw(seed)
    ours, theirs = _run(tg, case), _run(torch, case)
    if theirs[0] == "error" or ours[0] == "error":
        assert ours == theirs
        return
    tol = dict(rtol=1e-9, atol=1e-12) if case["dtype"] == "float64" else dict(rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(ours[0].detach().numpy(), theirs[0].detach().numpy(), **tol)
    for a, b in zip(ours[1], theirs[1], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), **tol)
    assert ours[2] == theirs[2]


def _qkv(lib, shape=(2, 3, 4, 5), dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.standard_normal(shape), dtype=getattr(lib, dtype), requires_grad=True) for _ in range(3)]


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (3, 4, 5)])
def test_a_query_with_no_admissible_key_gives_zeros_and_zero_gradients(shape):
    """All-False rows of a boolean mask: _safe_softmax (math path) and the fused kernel both give 0, not NaN."""
    results = []
    for lib in (tg, torch):
        q, k, v = _qkv(lib, shape)
        mask = lib.ones(4, 4, dtype=lib.bool)
        mask[1] = False
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out.sum().backward()
        results.append((out.detach().numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy(), out.grad_fn.name()))
    for a, b in zip(*results, strict=True):
        if isinstance(a, str):
            assert a == b
        else:
            assert not np.isnan(a).any()
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    assert np.all(results[0][0][..., 1, :] == 0)


def test_gradients_of_the_fused_kernel_have_no_derivative_as_in_torch():
    for lib in (tg, torch):
        q, k, v = _qkv(lib)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v)
        (grad_q,) = lib.autograd.grad(out.sum(), q, create_graph=True)
        assert grad_q.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::_scaled_dot_product_flash_attention_for_cpu_"
                                               "backward is not implemented"):
            grad_q.sum().backward()


def test_math_path_second_derivatives_as_in_torch():
    """3-D inputs take the composite path, which differentiates twice."""
    results = []
    for lib in (tg, torch):
        q, k, v = _qkv(lib, (3, 4, 5))
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        grads = lib.autograd.grad((out * out).sum(), (q, k, v), create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), (q, k, v))
        results.append([t.detach().numpy() for t in (*grads, *second)])
    for a, b in zip(*results, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_forward_ad_as_in_torch():
    """The fused kernel refuses forward AD with torch's message; the math path's tangent is torch's."""
    rng = np.random.default_rng(3)
    tangent = rng.standard_normal((3, 4, 5))
    outs = []
    for lib in (tg, torch):
        fa = lib.autograd.forward_ad
        q4, k4, v4 = (t.detach() for t in _qkv(lib))
        with fa.dual_level(), pytest.raises(NotImplementedError, match="Trying to use forward AD with "
                                                                       "_scaled_dot_product_flash_attention_for_cpu"):
            lib.nn.functional.scaled_dot_product_attention(fa.make_dual(q4, lib.ones_like(q4)), k4, v4)
        q, k, v = (t.detach() for t in _qkv(lib, (3, 4, 5)))
        with fa.dual_level():
            dual = fa.make_dual(q, lib.tensor(tangent))
            out = lib.nn.functional.scaled_dot_product_attention(dual, k, v, scale=0.3)
            outs.append(fa.unpack_dual(out).tangent.numpy())
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-9, atol=1e-12)


def test_dropout_takes_the_math_path_as_in_torch():
    graphs = []
    for lib in (tg, torch):
        q, k, v = _qkv(lib)
        out = lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
        graphs.append(recorded_graph([out]))
        everything_dropped = lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
        assert not everything_dropped.detach().numpy().any()
    assert graphs[0] == graphs[1]


@pytest.mark.parametrize("call", [
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(2, 4, 3), L.randn(2, 4, 3, dtype=L.float64),
                                                           L.randn(2, 4, 3)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(4), L.randn(4), L.randn(4)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(2, 4, 3), L.randn(2, 4, 3), L.randn(2, 4, 3),
                                                           attn_mask=L.ones(4, 4, dtype=L.int64)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(2, 4, 3), L.randn(2, 4, 3), L.randn(2, 4, 3),
                                                           attn_mask=L.ones(4, 4, dtype=L.float64)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(2, 4, 3), L.randn(2, 4, 3), L.randn(2, 4, 3),
                                                           is_causal=True, attn_mask=L.ones(4, 4, dtype=L.bool)),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(1, 4, 2, 3), L.randn(1, 3, 2, 3),
                                                           L.randn(1, 3, 2, 3), enable_gqa=True),
    lambda L: L.nn.functional.scaled_dot_product_attention(L.randn(1, 4, 2, 3), L.randn(1, 2, 2, 3),
                                                           L.randn(1, 2, 2, 3)),
], ids=["dtypes", "one_dim", "long_mask", "double_mask", "causal_and_mask", "heads_not_dividing", "heads_without_gqa"])
def test_errors_as_in_torch(call):
    ours, theirs = raised(tg, call), raised(torch, call)
    assert theirs is not None
    assert ours == theirs


def _attention_module(lib):
    import importlib

    return importlib.import_module(lib.__name__ + ".nn.attention")


_REFUSED = {
    "three_dims": lambda L: ((L.randn(3, 5, 4),) * 3, {}),
    "dropout": lambda L: ((L.randn(2, 3, 5, 4),) * 3, {"dropout_p": 0.2}),
    "batch": lambda L: ((L.randn(2, 3, 5, 4), L.randn(1, 3, 6, 4), L.randn(1, 3, 6, 4)), {}),
    "heads": lambda L: ((L.randn(2, 3, 5, 4), L.randn(2, 2, 6, 4), L.randn(2, 2, 6, 4)), {}),
    "grouped_heads_not_dividing": lambda L: ((L.randn(2, 3, 5, 4), L.randn(2, 2, 6, 4), L.randn(2, 2, 6, 4)),
                                             {"enable_gqa": True}),
    "mask_3d": lambda L: ((L.randn(2, 3, 5, 4), L.randn(2, 3, 6, 4), L.randn(2, 3, 6, 4)),
                          {"attn_mask": L.ones(3, 5, 6, dtype=L.bool)}),
    "mask_requires_grad": lambda L: ((L.randn(2, 3, 5, 4), L.randn(2, 3, 6, 4), L.randn(2, 3, 6, 4)),
                                     {"attn_mask": L.randn(5, 6, requires_grad=True)}),
    "value_head_size": lambda L: ((L.randn(2, 3, 5, 4), L.randn(2, 3, 6, 4), L.randn(2, 3, 6, 7)), {}),
    "last_dim_stride": lambda L: ((L.randn(2, 3, 4, 5).transpose(-1, -2), L.randn(2, 3, 6, 4), L.randn(2, 3, 6, 4)),
                                  {}),
    "integers": lambda L: ((L.ones(2, 3, 5, 4, dtype=L.int64),) * 3, {}),
}


def _refusal(lib, name: str):
    attention = _attention_module(lib)
    args, kwargs = _REFUSED[name](lib)
    with attention.sdpa_kernel([attention.SDPBackend.FLASH_ATTENTION]), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        error = raised(lib, lambda L: L.nn.functional.scaled_dot_product_attention(*args, **kwargs))
    return error, warning_texts(caught)


@pytest.mark.parametrize("name", sorted(_REFUSED))
def test_fused_kernel_only_refuses_with_torchs_warnings_and_error(name):
    """sdpa_kernel(FLASH_ATTENTION) on inputs the fused kernel cannot take: torch's reason, then its error."""
    ours, theirs = _refusal(tg, name), _refusal(torch, name)
    assert ours == theirs
    assert ours[0] == ("RuntimeError", "No available kernel.  Aborting execution.")


def _check_sdpa_kernel(lib) -> None:
    attention = _attention_module(lib)
    backend = attention.SDPBackend
    q, k, v = _qkv(lib)

    def node():
        return lib.nn.functional.scaled_dot_product_attention(q, k, v).grad_fn.name()

    fused, math_path = "ScaledDotProductFlashAttentionForCpuBackward0", "UnsafeViewBackward0"
    with attention.sdpa_kernel(backend.MATH):
        assert node() == math_path
        with attention.sdpa_kernel([backend.FLASH_ATTENTION, backend.MATH]):
            assert node() == fused
        assert node() == math_path
    with attention.sdpa_kernel([backend.MATH, backend.FLASH_ATTENTION], set_priority=True):
        assert node() == fused  # the CPU selection ignores priorities
    with attention.sdpa_kernel(backend.EFFICIENT_ATTENTION):
        assert raised(lib, lambda L: node()) == (
            "RuntimeError", "No viable backend for scaled_dot_product_attention was found. This is likely due to "
                            "turning off both the math kernel and the fused kernels.")
    assert node() == fused
    assert raised(lib, lambda L: attention.sdpa_kernel("math").__enter__()) == (
        "AssertionError", "Backend must be an instance of SDPBackend or a list of SDPBackend instances, got str")
    assert [(n, b.value) for n, b in backend.__members__.items()] == [
        ("ERROR", -1), ("MATH", 0), ("FLASH_ATTENTION", 1), ("EFFICIENT_ATTENTION", 2), ("CUDNN_ATTENTION", 3),
        ("OVERRIDEABLE", 4)]
    assert repr(backend.MATH) == "<SDPBackend.MATH: 0>"


@pytest.mark.parametrize("lib", ["tracegrad", "torch"])
def test_sdpa_kernel_chooses_restores_and_nests_as_torch(lib):
    _check_sdpa_kernel(tg if lib == "tracegrad" else torch)


def test_key_and_value_of_different_lengths_are_refused():
    """torch's fused kernel silently uses the first len(key) value rows; tracegrad refuses, in the words of
    torch's math path (which is what torch says for 3-D inputs)."""
    q, k, v = tg.randn(2, 3, 5, 4), tg.randn(2, 3, 6, 4), tg.randn(2, 3, 7, 4)
    with pytest.raises(RuntimeError, match=r"Expected size for first two dimensions of batch2 tensor to be: "
                                           r"\[6, 6\] but got: \[6, 7\]"):
        tg.nn.functional.scaled_dot_product_attention(q, k, v)
