"""Review of the small-gaps round 28: clip_grad_norm_'s NumPy fast path and gradients with a 0 stride, the backward
nodes' pickling and a custom Function node's read-only saved tensors, and where masked_fill_/index_fill_ warn about
an expanded tensor among their argument checks."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

from tests._lib import raised, tg, to_numpy, torch

# ---- clip_grad_norm_ -------------------------------------------------------------------------------------------


def _bits(t) -> list:
    a = to_numpy(t)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64).tolist()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_refuses_a_gradient_with_a_0_stride(dtype):
    def run(lib):
        ps = [lib.nn.Parameter(lib.zeros(2, 2, dtype=getattr(lib, dtype))) for _ in range(2)]
        ps[0].grad = lib.empty_strided((2, 2), (0, 1), dtype=getattr(lib, dtype)).fill_(3.)
        ps[1].grad = lib.full((2, 2), 5., dtype=getattr(lib, dtype))
        lib.nn.utils.clip_grad_norm_(ps, 1.)
    assert raised(tg, run) == raised(torch, run)


@pytest.mark.parametrize("shape", ["non-contiguous", "size-1 dim of stride 0"])
def test_clip_grad_norm_scales_other_layouts_bit_for_bit(shape):
    def run(lib):
        rs = np.random.RandomState(0)
        ps = [lib.nn.Parameter(lib.zeros(1, 3)) for _ in range(2)] + [lib.nn.Parameter(lib.zeros(3, 4))]
        for p in ps:
            p.grad = lib.tensor(rs.randn(*p.shape).astype(np.float32) * 10)
        if shape == "non-contiguous":
            ps[2].grad = ps[2].grad.t().contiguous().t()
        else:
            ps[0].grad = lib.empty_strided((1, 3), (0, 1)).fill_(2.)
        total = lib.nn.utils.clip_grad_norm_(ps, 1.)
        return _bits(total), [(_bits(p.grad), p.grad._version, p.grad.stride()) for p in ps]
    assert run(tg) == run(torch)


# ---- backward nodes --------------------------------------------------------------------------------------------

def _nodes(lib) -> dict:
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = lib.ones(2, requires_grad=True)
    y = x * 1
    y[0] = 5
    return {"mul": (x * x).grad_fn, "accumulate": (x * x).grad_fn.next_functions[0][0],
            "custom": Double.apply(x).grad_fn, "copyslices": y.grad_fn, "view": x[0].grad_fn}


@pytest.mark.parametrize("node", ["mul", "accumulate", "custom", "copyslices", "view"])
@pytest.mark.parametrize("how", [pickle.dumps, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"])
def test_nodes_cannot_be_pickled_or_copied(node, how):
    def run(lib):
        how(_nodes(lib)[node])
    assert raised(tg, run) == raised(torch, run)


@pytest.mark.parametrize("attribute", ["saved_tensors", "saved_variables", "_raw_saved_tensors"])
@pytest.mark.parametrize("action", ["set", "delete"])
def test_custom_function_node_saved_tensors_are_read_only(attribute, action):
    def run(lib):
        node = _nodes(lib)["custom"]
        setattr(node, attribute, 1) if action == "set" else delattr(node, attribute)
    assert raised(tg, run) == raised(torch, run)


def test_custom_function_node_saved_tensors_still_read():
    def run(lib):
        node = _nodes(lib)["custom"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [to_numpy(t).tolist() for t in node.saved_tensors + node.saved_variables]
        return values, len(node._raw_saved_tensors), [str(w.message) for w in caught]
    assert run(tg) == run(torch)


# ---- masked_fill_ / index_fill_: their checks around the expanded-write warning --------------------------------

_FILLS = [
    "e.masked_fill_(lib.tensor([True, False]), 5.)",
    "e.masked_fill_(lib.ones(4, 2, 3, dtype=lib.bool), 1.)",
    "e.masked_fill_(lib.tensor([True, False, True]), 1. + 2j)",
    "e.masked_fill_(lib.tensor([1, 0]), 5.)",
    "e.masked_fill_(lib.tensor([True, False]), lib.ones(2))",
    "c.masked_fill_(lib.tensor([1, 0]), 5.)",
    "c.masked_fill(lib.tensor([1, 0]), 5.)",
    "c.masked_fill(lib.tensor([True, False]), lib.ones(2))",
    "c.masked_fill(lib.tensor([True, False, True]), 4.)",
    "e.index_fill_(1, lib.tensor([5]), 5.)",
    "e.index_fill_(3, lib.tensor([0]), 5.)",
    "e.index_fill_(1, lib.tensor([[0]]), 1.)",
    "e.index_fill_(1, lib.tensor([0.]), 1.)",
    "e.index_fill_(0, lib.tensor([1]), 1j)",
    "c.index_fill_(5, lib.tensor([0]), 1j)",
    "c.index_fill_(5, lib.tensor([[0]]), 1.)",
    "c.index_fill_(0, lib.tensor([[9]]), 1j)",
    "c.index_fill(1, lib.tensor([9]), 1j)",
    "c.index_fill(0, lib.tensor([1]), 2.)",
]


@pytest.mark.parametrize("call", _FILLS)
def test_fill_checks_and_warning_in_torchs_order(call):
    def run(lib):
        e, c = lib.arange(3.).expand(2, 3), lib.ones(2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                result = to_numpy(eval(call, {"lib": lib, "e": e, "c": c})).tolist()  # noqa: S307 - own snippets
            except Exception as error:  # noqa: BLE001 - compared with torch's
                result = (type(error).__name__, str(error))
        return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]
    assert run(tg) == run(torch)
