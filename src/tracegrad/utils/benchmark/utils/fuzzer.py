"""``torch.utils.benchmark``'s fuzzer: ``Fuzzer`` draws sets of parameters (``FuzzedParameter``, ``ParameterAlias``)
and builds the tensors they describe (``FuzzedTensor``), for benchmarking an op over many shapes and layouts.

Parameters come from a NumPy ``RandomState`` and tensors from the global generator seeded from it, so a seed gives
PyTorch's parameters and, since tracegrad reproduces PyTorch's CPU generator, PyTorch's tensor values too. The
checks follow PyTorch 2.13's, including its inverted normalisation check: a custom distribution whose
probabilities sum to one is refused as "not normalized" (one that does not sum to one then fails in NumPy's
``choice``), so in 2.13 custom distributions cannot be used at all.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import tracegrad

__all__ = ["Fuzzer", "FuzzedParameter", "ParameterAlias", "FuzzedTensor"]

_DISTRIBUTIONS = ("loguniform", "uniform")
_MAX_ATTEMPTS = 1000  # parameter draws per step before giving up

Params = dict[str, Any]


class FuzzedParameter:
    """One named parameter drawn each step: "loguniform" or "uniform" between ``minval`` and ``maxval``
    (integers when both bounds are ints), or a ``{value: probability}`` dict. A ``strict`` parameter keeps its
    first draw while the fuzzer redraws the others to satisfy the constraints."""

    def __init__(self, name: str, minval: int | float | None = None, maxval: int | float | None = None,
                 distribution: str | dict[Any, float] | None = None, strict: bool = False) -> None:
        self._name = name
        self._minval = minval
        self._maxval = maxval
        self._distribution = self._check_distribution(distribution)
        self.strict = strict

    @property
    def name(self) -> str:
        return self._name

    def sample(self, state: np.random.RandomState) -> Any:
        if self._distribution == "loguniform":
            return self._loguniform(state)
        if self._distribution == "uniform":
            return self._uniform(state)
        if isinstance(self._distribution, dict):
            return self._custom_distribution(state)
        return None

    def _check_distribution(self, distribution):
        if not isinstance(distribution, dict):
            if distribution not in _DISTRIBUTIONS:
                raise AssertionError(f"Unknown distribution: {distribution}")
            return distribution
        if any(p < 0 for p in distribution.values()):
            raise AssertionError("Probabilities cannot be negative")
        # (PyTorch 2.13's test is inverted: it refuses the sums that *are* one, and a NaN sum)
        if not abs(sum(distribution.values()) - 1) > 1e-5:
            raise AssertionError("Distribution is not normalized")
        if self._minval is not None:
            raise AssertionError("When passing a custom distribution, 'minval' must be None")
        if self._maxval is not None:
            raise AssertionError("When passing a custom distribution, 'maxval' must be None")
        return distribution

    def _loguniform(self, state: np.random.RandomState) -> Any:
        output = int(2 ** state.uniform(low=_log2_or_none(self._minval), high=_log2_or_none(self._maxval)))
        if self._minval is not None and output < self._minval:
            return self._minval
        if self._maxval is not None and output > self._maxval:
            return self._maxval
        return output

    def _uniform(self, state: np.random.RandomState) -> Any:
        if isinstance(self._minval, int) and isinstance(self._maxval, int):
            return int(state.randint(low=self._minval, high=self._maxval + 1))
        return state.uniform(low=self._minval, high=self._maxval)

    def _custom_distribution(self, state: np.random.RandomState) -> Any:
        # an index is drawn, not a key: ``choice`` over the keys would turn them into NumPy scalars
        index = state.choice(np.arange(len(self._distribution)), p=tuple(self._distribution.values()))
        return list(self._distribution)[index]


def _log2_or_none(bound):
    return None if bound is None else np.log2(bound)


class ParameterAlias:
    """A drawn value that stands for another parameter's value (chains allowed, cycles refused)."""

    def __init__(self, alias_to: str) -> None:
        self.alias_to = alias_to

    def __repr__(self) -> str:
        return f"ParameterAlias[alias_to: {self.alias_to}]"


def dtype_size(dtype) -> int:
    """Bytes per element as PyTorch's fuzzer counts them (a complex dtype counted as its real part)."""
    if dtype == tracegrad.bool:
        return 1
    if dtype.is_floating_point or dtype.is_complex:
        return int(tracegrad.finfo(dtype).bits / 8)
    return int(tracegrad.iinfo(dtype).bits / 8)


def prod(values, base: int = 1) -> int:
    """The product in Python integers: NumPy's could overflow to a negative size that passes the size checks."""
    return functools.reduce(lambda x, y: int(x) * int(y), values, base)


def _exceeds(left, right) -> bool:
    """``left > right``, False when either bound is unset."""
    return left is not None and right is not None and left > right


class FuzzedTensor:
    """A tensor built each step from the parameters: ``size`` (ints or parameter names), allocated ``steps`` times
    larger and sliced back when steps are given, given a permuted memory layout with probability
    ``1 - probability_contiguous``, its dimension count optionally a parameter (``dim_parameter``)."""

    def __init__(self, name: str, size: tuple[str | int, ...], steps: tuple[str | int, ...] | None = None,
                 probability_contiguous: float = 0.5, min_elements: int | None = None,
                 max_elements: int | None = None, max_allocation_bytes: int | None = None,
                 dim_parameter: str | None = None, roll_parameter: str | None = None, dtype=tracegrad.float32,
                 cuda: bool = False, tensor_constructor: Callable | None = None) -> None:
        self._name = name
        self._size = size
        self._steps = steps
        self._probability_contiguous = probability_contiguous
        self._min_elements = min_elements
        self._max_elements = max_elements
        self._max_allocation_bytes = max_allocation_bytes
        self._dim_parameter = dim_parameter
        self._dtype = dtype
        self._cuda = cuda
        self._tensor_constructor = tensor_constructor
        # (``roll_parameter`` is accepted and unused, as in PyTorch)

    @property
    def name(self) -> str:
        return self._name

    @staticmethod
    def default_tensor_constructor(size, dtype, **kwargs):
        if dtype.is_floating_point or dtype.is_complex:
            return tracegrad.rand(size=size, dtype=dtype, device="cpu")
        return tracegrad.randint(1, 127, size=size, dtype=dtype, device="cpu")

    def _make_tensor(self, params: Params, state: np.random.RandomState) -> tuple[Any, dict[str, Any]]:
        size, steps, allocation_size = self._get_size_and_steps(params)
        constructor = self._tensor_constructor or self.default_tensor_constructor
        raw_tensor = constructor(size=allocation_size, dtype=self._dtype, **params)
        if self._cuda:
            raw_tensor = raw_tensor.cuda()
        raw_tensor, order = self._maybe_permuted_layout(raw_tensor, len(size), state)
        tensor = raw_tensor[tuple(slice(0, n * step, step) for n, step in zip(size, steps, strict=True))]
        properties = {
            "numel": int(tensor.numel()),
            "order": order,
            "steps": steps,
            "is_contiguous": tensor.is_contiguous(),
            "dtype": str(self._dtype),
        }
        return tensor, properties

    def _maybe_permuted_layout(self, raw_tensor, dim: int, state: np.random.RandomState):
        """``raw_tensor`` and the identity order, or (with probability ``1 - probability_contiguous``) the same
        values laid out in memory in a random non-identity dimension order, and that order."""
        order = np.arange(dim)
        if not state.rand() > self._probability_contiguous:  # (a NaN probability keeps the layout)
            return raw_tensor, order
        while dim > 1 and np.all(order == np.arange(dim)):
            order = state.permutation(raw_tensor.dim())
        relaid = raw_tensor.permute(tuple(order)).contiguous()
        return relaid.permute(tuple(np.argsort(order))), order

    def _get_size_and_steps(self, params: Params) -> tuple[tuple, tuple, tuple]:
        dim = params[self._dim_parameter] if self._dim_parameter is not None else len(self._size)

        def resolve(values) -> tuple:
            """Parameter names replaced by their values, cut or padded with ones to ``dim`` entries."""
            values = tuple(params.get(value, value) for value in values)[:dim]
            return values + (1,) * (dim - len(values))

        size = resolve(self._size)
        steps = resolve(self._steps or ())
        allocation_size = tuple(n * step for n, step in zip(size, steps, strict=True))
        return size, steps, allocation_size

    def satisfies_constraints(self, params: Params) -> bool:
        size, _, allocation_size = self._get_size_and_steps(params)
        num_elements = prod(size)
        if num_elements < 0:
            raise AssertionError("Computed number of elements is negative")
        allocation_bytes = prod(allocation_size, base=dtype_size(self._dtype))
        return not (_exceeds(num_elements, self._max_elements) or _exceeds(self._min_elements, num_elements)
                    or _exceeds(allocation_bytes, self._max_allocation_bytes))


class Fuzzer:
    """Draws parameter sets satisfying every constraint and every tensor's size limits, and builds the tensors:
    ``take(n)`` yields ``(tensors, tensor_properties, params)`` n times, the same for the same ``seed``."""

    def __init__(self, parameters: list[FuzzedParameter | list[FuzzedParameter]],
                 tensors: list[FuzzedTensor | list[FuzzedTensor]], constraints: list[Callable] | None = None,
                 seed: int | None = None) -> None:
        if seed is None:
            seed = int(np.random.RandomState().randint(0, 2 ** 32 - 1, dtype=np.int64))
        self._seed = seed
        self._parameters = Fuzzer._unpack(parameters, FuzzedParameter)
        self._tensors = Fuzzer._unpack(tensors, FuzzedTensor)
        self._constraints = constraints or ()
        name_overlap = {p.name for p in self._parameters} & {t.name for t in self._tensors}
        if name_overlap:
            raise ValueError(f"Duplicate names in parameters and tensors: {name_overlap}")
        self._rejections = 0
        self._total_generated = 0

    @staticmethod
    def _unpack(values, cls) -> tuple:
        """The items, one level of lists flattened."""
        return tuple(itertools.chain.from_iterable([value] if isinstance(value, cls) else value
                                                   for value in values))

    def take(self, n: int) -> Iterator[tuple[dict[str, Any], dict[str, dict[str, Any]], Params]]:
        state = np.random.RandomState(self._seed)
        tracegrad.manual_seed(state.randint(low=0, high=2 ** 63, dtype=np.int64))
        for _ in range(n):
            params = self._generate(state)
            tensors, tensor_properties = {}, {}
            for spec in self._tensors:
                tensors[spec.name], tensor_properties[spec.name] = spec._make_tensor(params, state)
            yield tensors, tensor_properties, params

    @property
    def rejection_rate(self) -> float:
        if not self._total_generated:
            return 0.0
        return self._rejections / self._total_generated

    def _generate(self, state: np.random.RandomState) -> Params:
        strict_params: Params = {}  # (a strict parameter's first draw, kept across attempts)
        for _ in range(_MAX_ATTEMPTS):
            candidate = self._resolve_aliases(self._draw(state, strict_params))
            self._total_generated += 1
            if not all(constraint(candidate) for constraint in self._constraints) or \
                    not all(spec.satisfies_constraints(candidate) for spec in self._tensors):
                self._rejections += 1
                continue
            return candidate
        raise ValueError("Failed to generate a set of valid parameters.")

    def _draw(self, state: np.random.RandomState, strict_params: Params) -> Params:
        candidate: Params = {}
        for parameter in self._parameters:
            if parameter.strict and parameter.name in strict_params:
                candidate[parameter.name] = strict_params[parameter.name]
                continue
            candidate[parameter.name] = parameter.sample(state)
            if parameter.strict:
                strict_params[parameter.name] = candidate[parameter.name]
        return candidate

    @staticmethod
    def _resolve_aliases(params: Params) -> Params:
        """Each alias replaced by its target's value, in passes over the keys, refusing a pass that resolves
        nothing (a cycle)."""
        params = dict(params)
        alias_count = _count_aliases(params)
        while alias_count:
            for key in list(params):
                if isinstance(params[key], ParameterAlias):
                    params[key] = params[params[key].alias_to]
            new_alias_count = _count_aliases(params)
            if new_alias_count == alias_count:
                raise ValueError(f"ParameterAlias cycle detected\n{params}")
            alias_count = new_alias_count
        return params


def _count_aliases(params: Params) -> int:
    return sum(isinstance(value, ParameterAlias) for value in params.values())
