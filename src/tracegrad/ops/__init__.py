"""The operator library (layer 2). ``MODULES`` lists every op module, in the order their ``METHODS`` (Tensor
methods) and ``PUBLIC`` (functions in the ``tracegrad`` namespace) are installed: a later family may refine a
name an earlier one declared (e.g. ``binary.pow`` with PyTorch's scalar overloads)."""

from __future__ import annotations

from .._ops import aten  # noqa: F401 - ``tracegrad.ops.aten.mm.default`` (see tracegrad/_ops.py)
from . import (
    binary,
    complex_ops,
    creation,
    extra_math,
    fake_quantize,
    fft,
    gamma,
    indexing,
    inference_writes,
    legacy_linalg,
    linalg,
    linalg_core,
    linalg_extra,
    lowrank,
    namespace_extras,
    nn_ops,
    pointwise,
    random_ops,
    raw_backward,
    reductions,
    reductions_extra,
    shape,
    shape_extra,
    sobol,
    special_bessel,
    special_fns,
    special_polynomials,
    standard_gamma,
    statistics,
    stft,
    tensor_extras,
    unary,
    variants,
    views,
    windows,
)

# isort: split
from . import foreach  # (after the operators it runs on each tensor of a list, which it looks up)

MODULES = [pointwise, creation, views, reductions, shape, indexing, linalg_core, unary, binary, reductions_extra,
           linalg, linalg_extra, shape_extra, nn_ops, random_ops, variants, complex_ops, gamma, special_fns,
           special_bessel, special_polynomials, extra_math, statistics, windows,
           namespace_extras, legacy_linalg, tensor_extras, standard_gamma, fft,
           stft, lowrank, sobol, fake_quantize, foreach]

raw_backward.install()
from .registry import REGISTRY  # noqa: E402

variants.install_inner_out_refusals(REGISTRY)
inference_writes.install(REGISTRY)


def __getattr__(name: str):
    """``torch.ops.<namespace>`` for any namespace besides ``aten``: the operators ``torch.library`` defined there."""
    if name.startswith("__"):
        raise AttributeError(name)
    from .._ops import namespace

    return namespace(name)
