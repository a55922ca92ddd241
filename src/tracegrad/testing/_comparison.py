"""``torch.testing.assert_close``: the same pairing of inputs, tolerances and error messages as PyTorch's
``torch/testing/_comparison.py``, so that a failing comparison reads character for character as in torch."""

from __future__ import annotations

import cmath
import collections.abc
import contextlib
import warnings
from collections.abc import Callable, Collection, Sequence
from typing import Any, NoReturn

import numpy as np

import tracegrad as torch
from tracegrad.backend.dtypes import bfloat16

_Msg = str | Callable[[str], str] | None


class ErrorMeta(Exception):
    """An internal failure carrying the user-facing exception type, its message and the item's position."""

    def __init__(self, type: type[Exception], msg: str, *, id: tuple[Any, ...] = ()) -> None:  # noqa: A002
        super().__init__("Internal comparison error; raise ErrorMeta.to_error() for user facing errors.")
        self.type = type
        self.msg = msg
        self.id = id

    def to_error(self, msg: _Msg = None) -> Exception:
        if not isinstance(msg, str):
            generated_msg = self.msg
            if self.id:
                generated_msg += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.id)}"
            msg = msg(generated_msg) if callable(msg) else generated_msg
        return self.type(msg)


# {dtype: (rtol, atol)}, PyTorch's table; dtypes tracegrad lacks (complex32, quantized) are left out
_DTYPE_PRECISIONS = {
    torch.float16: (0.001, 1e-5),
    bfloat16: (0.016, 1e-5),  # (the dtype object, without bringing bfloat16 into use)
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


# what torch adds to the message of an exception a comparison did not expect
_REPORT_A_BUG = ("If you are a user and see this message during normal operation please file an issue at "
                 "https://github.com/pytorch/pytorch/issues. If you are a developer and working on the comparison "
                 "functions, please except the previous error and raise an expressive `ErrorMeta` instead.")


def default_tolerances(*inputs: Any, dtype_precisions: dict | None = None) -> tuple[float, float]:
    """The loosest (rtol, atol) of the inputs' dtypes (tensors or dtypes)."""
    dtypes = []
    for input in inputs:  # noqa: A001
        if isinstance(input, torch.Tensor):
            dtypes.append(input.dtype)
        elif isinstance(input, torch.dtype):
            dtypes.append(input)
        else:
            raise TypeError(f"Expected a torch.Tensor or a torch.dtype, but got {type(input)} instead.")
    dtype_precisions = dtype_precisions or _DTYPE_PRECISIONS
    rtols, atols = zip(*[dtype_precisions.get(dtype, (0.0, 0.0)) for dtype in dtypes], strict=True)
    return max(rtols), max(atols)


def get_tolerances(*inputs: Any, rtol: float | None, atol: float | None,
                   id: tuple[Any, ...] = ()) -> tuple[float, float]:  # noqa: A002
    if (rtol is None) ^ (atol is None):
        # both or neither: atol=0 alone could still pass through a nonzero default rtol
        raise ErrorMeta(
            ValueError,
            f"Both 'rtol' and 'atol' must be either specified or omitted, "
            f"but got no {'rtol' if rtol is None else 'atol'}.",
            id=id,
        )
    if rtol is not None and atol is not None:
        return rtol, atol
    return default_tolerances(*inputs)


def _make_mismatch_msg(*, default_identifier: str, identifier: _Msg = None, extra: str | None = None,
                       abs_diff: float, abs_diff_idx: tuple[int, ...] | None = None, atol: float,
                       rel_diff: float, rel_diff_idx: tuple[int, ...] | None = None, rtol: float) -> str:
    equality = rtol == 0 and atol == 0

    def make_diff_msg(*, type: str, diff: float, idx: tuple[int, ...] | None, tol: float) -> str:  # noqa: A002
        if idx is None:
            msg = f"{type.title()} difference: {diff}"
        else:
            msg = f"Greatest {type} difference: {diff} at index {idx}"
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += make_diff_msg(type="absolute", diff=abs_diff, idx=abs_diff_idx, tol=atol)
    msg += make_diff_msg(type="relative", diff=rel_diff, idx=rel_diff_idx, tol=rtol)
    return msg.strip()


def make_scalar_mismatch_msg(actual: complex, expected: complex, *, rtol: float, atol: float,
                             identifier: _Msg = None) -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _make_mismatch_msg(default_identifier="Scalars", identifier=identifier,
                              extra=f"Expected {expected} but got {actual}.",
                              abs_diff=abs_diff, atol=atol, rel_diff=rel_diff, rtol=rtol)


def make_tensor_mismatch_msg(actual: torch.Tensor, expected: torch.Tensor, matches: torch.Tensor, *,
                             rtol: float, atol: float, identifier: _Msg = None) -> str:
    def unravel_flat_index(flat_index: int) -> tuple[int, ...]:
        return tuple(int(i) for i in np.unravel_index(flat_index, tuple(matches.shape))) if matches.shape else ()

    number_of_elements = matches.numel()
    total_mismatches = number_of_elements - int(torch.sum(matches))
    extra = (f"Mismatched elements: {total_mismatches} / {number_of_elements} "
             f"({total_mismatches / number_of_elements:.1%})")
    actual_flat, expected_flat, matches_flat = actual.flatten(), expected.flatten(), matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        # integers are compared in int64 so that the difference cannot overflow
        actual_flat, expected_flat = actual_flat.to(torch.int64), expected_flat.to(torch.int64)
    abs_diff = torch.abs(actual_flat - expected_flat)
    abs_diff[matches_flat] = 0  # only mismatches count towards the greatest difference
    max_abs_diff, max_abs_diff_flat_idx = torch.max(abs_diff, 0)
    rel_diff = abs_diff / torch.abs(expected_flat)
    rel_diff[matches_flat] = 0
    max_rel_diff, max_rel_diff_flat_idx = torch.max(rel_diff, 0)
    return _make_mismatch_msg(default_identifier="Tensor-likes", identifier=identifier, extra=extra,
                              abs_diff=max_abs_diff.item(), abs_diff_idx=unravel_flat_index(int(max_abs_diff_flat_idx)),
                              atol=atol, rel_diff=max_rel_diff.item(),
                              rel_diff_idx=unravel_flat_index(int(max_rel_diff_flat_idx)), rtol=rtol)


class UnsupportedInputs(Exception):  # noqa: N818 - PyTorch's name
    """Raised while constructing a Pair that cannot handle its inputs: the next pair type is tried."""


class Pair:
    """One leaf comparison; ``compare`` raises an :class:`ErrorMeta` on mismatch."""

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), **unknown_parameters: Any) -> None:  # noqa: A002
        self.actual = actual
        self.expected = expected
        self.id = id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _inputs_not_supported() -> NoReturn:
        raise UnsupportedInputs

    @staticmethod
    def _check_inputs_isinstance(*inputs: Any, cls: type | tuple[type, ...]) -> None:
        if not all(isinstance(input, cls) for input in inputs):
            Pair._inputs_not_supported()

    def _fail(self, type: type[Exception], msg: str) -> NoReturn:  # noqa: A002
        raise ErrorMeta(type, msg, id=self.id)

    def compare(self) -> None:
        raise NotImplementedError

    def extra_repr(self) -> Sequence[str]:
        return []

    def __repr__(self) -> str:
        fields = [("id", self.id), ("actual", self.actual), ("expected", self.expected),
                  *[(name, getattr(self, name)) for name in self.extra_repr()]]
        return "\n".join((f"{type(self).__name__}(", *[f"    {name}={value!s}," for name, value in fields], ")"))


class NonePair(Pair):
    def __init__(self, actual: Any, expected: Any, **other_parameters: Any) -> None:
        if not (actual is None or expected is None):
            self._inputs_not_supported()
        super().__init__(actual, expected, **other_parameters)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...], **other_parameters: Any) -> None:  # noqa: A002
        self._check_inputs_isinstance(actual, expected, cls=(bool, np.bool_))
        actual, expected = (bool(value) for value in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    _TYPE_TO_DTYPE = {int: torch.int64, float: torch.float64, complex: torch.complex128}

    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), rtol: float | None = None,  # noqa: A002
                 atol: float | None = None, equal_nan: bool = False, check_dtype: bool = False,
                 **other_parameters: Any) -> None:
        self._check_inputs_isinstance(actual, expected, cls=(int, float, complex, np.number))
        actual, expected = (value.item() if isinstance(value, np.number) else value for value in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(*[self._TYPE_TO_DTYPE[type(value)] for value in (actual, expected)],
                                              rtol=rtol, atol=atol, id=id)
        self.equal_nan = equal_nan
        self.check_dtype = check_dtype

    def compare(self) -> None:
        if self.check_dtype and type(self.actual) is not type(self.expected):
            self._fail(AssertionError, f"The (d)types do not match: {type(self.actual)} != {type(self.expected)}.")
        if self.actual == self.expected:
            return
        if self.equal_nan and cmath.isnan(self.actual) and cmath.isnan(self.expected):
            return
        abs_diff = abs(self.actual - self.expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(self.expected):
            return
        self._fail(AssertionError, make_scalar_mismatch_msg(self.actual, self.expected, rtol=self.rtol, atol=self.atol))

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_dtype")


class TensorLikePair(Pair):
    def __init__(self, actual: Any, expected: Any, *, id: tuple[Any, ...] = (), allow_subclasses: bool = True,  # noqa: A002
                 rtol: float | None = None, atol: float | None = None, equal_nan: bool = False,
                 check_device: bool = True, check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **other_parameters: Any) -> None:
        # inputs must be directly related (a Parameter and a Tensor are; a NumPy array and a Tensor are not)
        if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
            self._inputs_not_supported()
        if not allow_subclasses and type(actual) is not type(expected):
            self._inputs_not_supported()
        actual, expected = (self._to_tensor(value) for value in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = get_tolerances(actual, expected, rtol=rtol, atol=atol, id=self.id)
        self.equal_nan = equal_nan
        self.check_device = check_device
        self.check_dtype = check_dtype
        self.check_layout = check_layout
        self.check_stride = check_stride

    def _to_tensor(self, tensor_like: Any) -> torch.Tensor:
        if isinstance(tensor_like, torch.Tensor):
            return tensor_like
        try:
            return torch.as_tensor(tensor_like)
        except Exception:
            self._inputs_not_supported()

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        if any(tensor.device.type == "meta" for tensor in (actual, expected)):
            return
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual: torch.Tensor, expected: torch.Tensor) -> None:
        def raise_mismatch_error(attribute_name: str, actual_value: Any, expected_value: Any) -> NoReturn:
            self._fail(AssertionError,
                       f"The values for attribute '{attribute_name}' do not match: {actual_value} != {expected_value}.")

        if actual.shape != expected.shape:
            raise_mismatch_error("shape", actual.shape, expected.shape)
        if actual.layout != expected.layout:
            if self.check_layout:
                raise_mismatch_error("layout", actual.layout, expected.layout)
        elif self.check_stride and actual.stride() != expected.stride():
            raise_mismatch_error("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            raise_mismatch_error("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype != expected.dtype:
            raise_mismatch_error("dtype", actual.dtype, expected.dtype)

    def _equalize_attributes(self, actual: torch.Tensor, expected: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype != expected.dtype:
            dtype = torch.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(dtype), expected.to(dtype)
        return actual, expected

    def _compare_values(self, actual: torch.Tensor, expected: torch.Tensor) -> None:
        rtol, atol = self.rtol, self.atol
        matches = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=self.equal_nan)
        if torch.all(matches):
            return
        if actual.shape == torch.Size([]):
            msg = make_scalar_mismatch_msg(actual.item(), expected.item(), rtol=rtol, atol=atol)
        else:
            msg = make_tensor_mismatch_msg(actual, expected, matches, rtol=rtol, atol=atol)
        self._fail(AssertionError, msg)

    def extra_repr(self) -> Sequence[str]:
        return ("rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout", "check_stride")


def originate_pairs(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]],
                    sequence_types: tuple[type, ...] = (collections.abc.Sequence,),
                    mapping_types: tuple[type, ...] = (collections.abc.Mapping,),
                    id: tuple[Any, ...] = (), **options: Any) -> list[Pair]:  # noqa: A002
    """Recurse through matching sequences and mappings; the first pair type that accepts a leaf compares it."""
    recurse = dict(pair_types=pair_types, sequence_types=sequence_types, mapping_types=mapping_types, **options)
    if (isinstance(actual, sequence_types) and not isinstance(actual, str)
            and isinstance(expected, sequence_types) and not isinstance(expected, str)):
        actual_len, expected_len = len(actual), len(expected)
        if actual_len != expected_len:
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: {actual_len} != {expected_len}",
                            id=id)
        return [pair for idx in range(actual_len)
                for pair in originate_pairs(actual[idx], expected[idx], id=(*id, idx), **recurse)]
    if isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise ErrorMeta(
                AssertionError,
                f"The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                f"Additional keys in the actual mapping: {sorted(actual_keys - expected_keys)}",
                id=id,
            )
        keys: Collection = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        return [pair for key in keys for pair in originate_pairs(actual[key], expected[key], id=(*id, key), **recurse)]
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
        except ErrorMeta:
            raise
        except Exception as error:
            raise RuntimeError(
                f"Originating a {pair_type.__name__}() at item {''.join(str([item]) for item in id)} with\n\n"
                f"{type(actual).__name__}(): {actual}\n\nand\n\n{type(expected).__name__}(): {expected}\n\n"
                f"resulted in the unexpected exception above. {_REPORT_A_BUG}"
            ) from error
    raise ErrorMeta(TypeError,
                    f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.", id=id)


def not_close_error_metas(actual: Any, expected: Any, *, pair_types: Sequence[type[Pair]] = (),
                          **options: Any) -> list[ErrorMeta]:
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types, **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas: list[ErrorMeta] = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
        except Exception as error:
            raise RuntimeError(f"Comparing\n\n{pair}\n\nresulted in the unexpected exception above. {_REPORT_A_BUG}"
                               ) from error
    return error_metas


def assert_close(actual: Any, expected: Any, *, allow_subclasses: bool = True, rtol: float | None = None,
                 atol: float | None = None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True, check_stride: bool = False,
                 msg: _Msg = None) -> None:
    """Assert that ``actual`` and ``expected`` are close (``torch.testing.assert_close``)."""
    __tracebackhide__ = True  # hide this frame from pytest tracebacks
    error_metas = not_close_error_metas(
        actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
        check_dtype=check_dtype, check_layout=check_layout, check_stride=check_stride, msg=msg,
    )
    if error_metas:
        raise error_metas[0].to_error(msg)


def assert_allclose(actual: Any, expected: Any, rtol: float | None = None, atol: float | None = None,
                    equal_nan: bool = True, msg: str = "") -> None:
    """Deprecated since PyTorch 1.12: use :func:`assert_close`."""
    warnings.warn(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. "
        "You can find detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.",
        FutureWarning,
        stacklevel=2,
    )
    if not isinstance(actual, torch.Tensor):
        actual = torch.tensor(actual)
    if not isinstance(expected, torch.Tensor):
        expected = torch.tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = default_tolerances(actual, expected, dtype_precisions={
            torch.float16: (1e-3, 1e-3), torch.float32: (1e-4, 1e-5), torch.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)
