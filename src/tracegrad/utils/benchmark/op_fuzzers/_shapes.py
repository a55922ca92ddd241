"""The parameter families PyTorch's op fuzzers share: a strict dimension count, per-dimension sizes that are
either any integer (log-uniform) or one of a favoured set of sizes, per-dimension steps, and a spare random value.
Their order is part of the specification: parameters are drawn in it."""

from __future__ import annotations

from ..utils.fuzzer import FuzzedParameter, ParameterAlias

MAX_DIMS = 3


def dimension_count(name: str) -> FuzzedParameter:
    return FuzzedParameter(name, distribution={1: 0.3, 2: 0.4, 3: 0.3}, strict=True)


def any_sizes(minval: int, maxval: int) -> list[FuzzedParameter]:
    return [FuzzedParameter(name=f"k_any_{i}", minval=minval, maxval=maxval, distribution="loguniform")
            for i in range(MAX_DIMS)]


def favoured_sizes(kind: str, sizes) -> list[FuzzedParameter]:
    """``k_<kind>_i``: one of ``sizes``, all equally likely."""
    return [FuzzedParameter(name=f"k_{kind}_{i}", distribution={size: 1. / len(sizes) for size in sizes})
            for i in range(MAX_DIMS)]


def chosen_sizes(choices: dict[str, float]) -> list[FuzzedParameter]:
    """``k_i``: the size of family ``k_<kind>_i`` drawn with probability ``choices[kind]``."""
    return [FuzzedParameter(name=f"k{i}", strict=True,
                            distribution={ParameterAlias(f"k_{kind}_{i}"): p for kind, p in choices.items()})
            for i in range(MAX_DIMS)]


def steps(names: list[str]) -> list[FuzzedParameter]:
    """For each dimension, a step per name (``<name>_i``), mostly one."""
    return [FuzzedParameter(name=f"{name}_{i}", distribution={1: 0.8, 2: 0.06, 4: 0.06, 8: 0.04, 16: 0.04})
            for i in range(MAX_DIMS) for name in names]


def random_value() -> FuzzedParameter:
    """Repeatable entropy for whoever uses the fuzzer."""
    return FuzzedParameter(name="random_value", minval=0, maxval=2 ** 32 - 1, distribution="uniform")
