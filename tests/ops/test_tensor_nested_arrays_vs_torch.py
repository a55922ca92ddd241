"""NumPy arrays, NumPy scalars of every kind and tensors met inside the lists given to ``torch.tensor``, read as
torch reads them: element by element, each through CPython's number protocols (an array is a sequence of NumPy
scalars, a tensor a sequence of 0-d tensors). Into an integer dtype a float32 array is refused ("'numpy.float32'
object cannot be interpreted as an integer"), a float tensor too ("only integer tensors of a single element can be
converted to an index"), values beyond the dtype are refused where they are met; a uint64 dtype takes Python ints
only; NumPy strings, bytes, datetimes and voids are refused in their own words; a complex tensor read as real
refuses a nonzero imaginary part. Before, an array or tensor whose shape fitted was copied by NumPy's casts
(truncated, wrapped, datetimes as their day counts)."""

from __future__ import annotations

import warnings

import pytest
from _lib import np, tg, torch, value_or_error, warning_texts

TARGETS = ["int64", "int32", "uint8", "uint64", "bool", "float16", "float32", "float64", "complex64", None]

_DAY = np.datetime64("2020-01-01")

# Each builds the data for one library (tensors are that library's)
DATA = {
    "float32 array row": lambda lib: [[1, 2], np.array([3.5, 4], dtype=np.float32)],
    "float32 array first": lambda lib: [np.array([3.5, 4], dtype=np.float32), [1, 2]],
    "float64 array row": lambda lib: [[1, 2], np.array([3.5, 4])],
    "float64 array 1e20": lambda lib: [[1, 2], np.array([1, 1e20])],
    "float64 array nan": lambda lib: [[1, 2], np.array([1, np.nan])],
    "float16 array": lambda lib: [[1, 2], np.array([1, 2.5], dtype=np.float16)],
    "int64 array -3": lambda lib: [[1, 2], np.array([1, -3])],
    "int64 array -200 300": lambda lib: [[1, 2], np.array([-200, 300])],
    "int64 array 2**40": lambda lib: [[1, 2], np.array([1, 2**40])],
    "uint64 array 2**63": lambda lib: [[1, 2], np.array([1, 2**63], dtype=np.uint64)],
    "complex128 array": lambda lib: [[1, 2], np.array([1, 2 + 1j])],
    "complex64 array": lambda lib: [[1, 2], np.array([1, 2 + 1j], dtype=np.complex64)],
    "bool array": lambda lib: [[1, 2], np.array([True, False])],
    "2-d int array": lambda lib: [[[1, 2]], np.array([[300, 2]])],
    "str array": lambda lib: [[1, 2], np.array(["a", "b"])],
    "bytes array of ints": lambda lib: [np.array([b"a"])],
    "datetime array": lambda lib: [[1, 2], np.array([_DAY, _DAY])],
    "timedelta array": lambda lib: [[1], np.array([np.timedelta64(3, "s")])],
    "void array": lambda lib: [[1, 2], np.zeros(2, dtype="V4")],
    "object array": lambda lib: [[1, 2], np.array([1, 2.5], dtype=object)],
    "object array 2**70": lambda lib: [[1, 2], np.array([1, 2**70], dtype=object)],
    "str_ item": lambda lib: [1, np.str_("a")],
    "bytes_ item": lambda lib: [1, np.bytes_(b"a")],
    "bytes_ of ints": lambda lib: [np.bytes_(b"ab")],
    "0-d str array item": lambda lib: [1, np.array("a")],
    "datetime64 item": lambda lib: [1, _DAY],
    "NaT item": lambda lib: [1, np.datetime64("NaT")],
    "timedelta64 item": lambda lib: [1, np.timedelta64(3, "s")],
    "void item": lambda lib: [1, np.zeros(1, "V2")[0]],
    "0-d float tensor": lambda lib: [1, lib.tensor(2.5)],
    "0-d complex tensor 1+0j": lambda lib: [1, lib.tensor(1 + 0j)],
    "0-d bool tensor": lambda lib: [1, lib.tensor(True)],
    "0-d uint64 tensor 2**63": lambda lib: [1, lib.tensor(2**63, dtype=lib.uint64)],
    "float tensor row": lambda lib: [[1, 2], lib.tensor([1, 2.5])],
    "float64 tensor 1e20": lambda lib: [[1, 2], lib.tensor([1, 1e20], dtype=lib.float64)],
    "float16 tensor row": lambda lib: [[1, 2], lib.tensor([1, 2.5], dtype=lib.float16)],
    "int tensor row 300": lambda lib: [[1, 2], lib.tensor([1, 300])],
    "int tensor row -3": lambda lib: [[1, 2], lib.tensor([1, -3])],
    "uint8 tensor row 200": lambda lib: [[1, 2], lib.tensor([1, 200], dtype=lib.uint8)],
    "uint64 tensor row 2**63": lambda lib: [[1, 2], lib.tensor([1, 2**63], dtype=lib.uint64)],
    "bool tensor row": lambda lib: [[1, 2], lib.tensor([True, False])],
    "complex tensor row": lambda lib: [[1, 2], lib.tensor([1, 2 + 1j])],
    "complex tensor row nan imaginary": lambda lib: [[1, 2], lib.tensor([1, complex(2, float("nan"))])],
    "2-d tensor block": lambda lib: [[[1, 2]], lib.tensor([[300, 2]])],
    "tensors of two elements": lambda lib: [lib.tensor([1.5, 2.5]), lib.tensor([1, 2])],
    "tensor requiring grad": lambda lib: [1, lib.tensor(2.5, requires_grad=True)],
    "tensor row requiring grad": lambda lib: [[1, 2], lib.tensor([1, 2.5], requires_grad=True)],
}


@pytest.fixture(autouse=True)
def warn_always():
    """Once-per-process warnings (the list of arrays, a tensor requiring grad read as a float) given each time."""
    tg.set_warn_always(True)
    torch.set_warn_always(True)
    yield
    tg.set_warn_always(False)
    torch.set_warn_always(False)


def _outcome(lib, build, target):
    """The tensor (or error) and the warnings given, as (category, text) pairs."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = value_or_error(lambda lib: lib.tensor(build(lib), dtype=target and getattr(lib, target)), lib)
    return result, list(zip([w.category.__name__ for w in caught], warning_texts(caught)))


@pytest.mark.parametrize("target", TARGETS, ids=str)
def test_arrays_scalars_and_tensors_in_lists_read_as_torch(target):
    mismatches = [f"{name}: tracegrad {ours}, torch {theirs}" for name, build in DATA.items()
                  if (ours := _outcome(tg, build, target)) != (theirs := _outcome(torch, build, target))]
    assert not mismatches


def test_numpy_text_scalars_named_as_torch():
    """torch.tensor(np.str_("a")): refused by its type's full name, as torch's tp_name reads."""
    for data in (np.str_("a"), np.bytes_(b"a")):
        assert value_or_error(lambda lib, d=data: lib.tensor(d), tg) == value_or_error(lambda lib, d=data: lib.tensor(d), torch)


@pytest.mark.parametrize("number", [1 + 0j, 1 + 1j, complex(float("nan"), 0), complex(0, float("nan")), 2.0**63 + 0j,
                                    1e19 + 0j, -3.7 + 0j], ids=repr)
@pytest.mark.parametrize("convert", [float, int, complex, bool], ids=lambda f: f.__name__)
def test_python_numbers_of_a_complex_tensor_as_torch(convert, number):
    """float(t) and int(t) of a complex tensor: its real part where the imaginary part is 0, else c10's error."""
    ours = value_or_error(lambda lib: lib.tensor([convert(lib.tensor(number))]), tg)
    assert ours == value_or_error(lambda lib: lib.tensor([convert(lib.tensor(number))]), torch)


@pytest.mark.parametrize("call", ["tensor", "new_tensor"])
def test_copy_construct_warning_as_torch(call):
    """torch.tensor(t) and t.new_tensor(t) advise a copy in their own names, at the caller's line; a tensor inside a
    list is read, not copied, and gets no advice."""
    def outcome(lib, data):
        source = lib.tensor([1.0, 2.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            made = lib.tensor if call == "tensor" else source.new_tensor
            made(data(source))
        return [(text, w.filename == __file__) for w, text in zip(caught, warning_texts(caught))]

    for data in (lambda t: t, lambda t: [t[0], t[1]]):
        assert outcome(tg, data) == outcome(torch, data)
