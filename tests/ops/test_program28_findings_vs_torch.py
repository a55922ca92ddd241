"""Differences the twenty-eighth set of user programs (``tests/test_user_programs28_vs_torch.py``) found, each
compared with torch: custom-op schemas (float, Scalar and str defaults as torch's schema printer writes them,
aten schemas named ``aten::name.overload``), infer_schema's refusals, Tensor's operator methods' names, and
``torch.overrides``' resolve_name / get_ignored_functions / get_overridable_functions."""

import uuid

import pytest
from _lib import tg, torch


def _fresh_ns() -> str:
    return "f28" + uuid.uuid4().hex[:8]


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return type(e).__name__, str(e).replace("tracegrad", "torch")
    return None


def _lazy_annotation_refusal(lib):
    def local(x: "lib.Tensor") -> "lib.Tensor":  # noqa: F821 - a name only the function's frame knew
        return x

    local.__globals__.pop("lib", None)
    return _error(lambda: lib.library.infer_schema(local, mutates_args=()))


def test_lazy_annotation_refusal_gives_torchs_hint():
    assert _lazy_annotation_refusal(tg) == _lazy_annotation_refusal(torch)


def test_unsupported_type_message_prints_number_as_torch():
    def f(x: list) -> int:
        return 1

    def message(lib):
        text = _error(lambda: lib.library.infer_schema(f, mutates_args=()))[1]
        return text.split(" Got func")[0].split(", torch.distributed")[0].rstrip("]).")  # (torch lists
        # its distributed GroupName last; tracegrad's torch.distributed is a build without it)

    assert message(tg) == message(torch)


SCHEMAS = [
    "f(Tensor x, float a=2.0, float b=1e-3, float[] c=[1.0, 2.5], Scalar s=3.0, Scalar t=2, float? o=None) -> Tensor",
    "f(Tensor x, float a=0.1, float b=-0.0, float c=1e20, float d=1e10, float e=2, int k=3) -> Tensor",
    "f(Tensor x, *, str mode='mean', float beta=-1.5) -> Tensor",
    # (review: int lists spaced, an int[N] of one repeated value printed as the value, strings escaped as c10's)
    "f(Tensor x, int[2] b=[3,3], int[] c=[1,2], int[1] e=[4], SymInt[2] g=[4,4], bool[2] d=[True,False]) -> Tensor",
    "f(Tensor x, str s=\"a'b\\\"c\\\\d\", str t='x\\ty') -> Tensor",
]


@pytest.mark.parametrize("name", ["rot90.default", "avg_pool2d.default", "max_pool2d_with_indices.default", "amax.default", "roll.default"])
def test_aten_schema_int_list_defaults_print_as_torch(name):
    packet, overload = name.split(".")
    assert str(getattr(getattr(tg.ops.aten, packet), overload)._schema) == str(
        getattr(getattr(torch.ops.aten, packet), overload)._schema)


@pytest.mark.parametrize("schema", SCHEMAS)
def test_library_schema_prints_defaults_as_torch(schema):
    def printed(lib):
        ns = _fresh_ns()
        my_lib = lib.library.Library(ns, "FRAGMENT")
        my_lib.define(schema)
        return str(getattr(lib.ops, ns).f.default._schema).replace(ns, "NS")

    assert printed(tg) == printed(torch)


def test_custom_op_schema_and_declaration_print_float_defaults_as_torch():
    def outcome(lib):
        ns = _fresh_ns()

        def scale(x: lib.Tensor, factor: float = 2.0, eps: float = 1e-5) -> lib.Tensor:
            return x * factor

        op = lib.library.custom_op(f"{ns}::scale", scale, mutates_args=())
        error = _error(lambda: op(lib.ones(1), "big"))
        return [str(getattr(lib.ops, ns).scale.default._schema).replace(ns, "NS"), error[1].replace(ns, "NS")]

    assert outcome(tg) == outcome(torch)


@pytest.mark.parametrize("name", ["add.Tensor", "mul_.Tensor", "leaky_relu.default", "celu.default", "max.dim",
                                  "gelu.default", "sum.dim_IntList", "cauchy_.default"])
def test_aten_schema_is_printed_with_namespace_and_overload(name):
    def printed(lib):
        packet, overload = name.split(".")
        return str(getattr(getattr(lib.ops.aten, packet), overload)._schema)

    assert printed(tg) == printed(torch)


DUNDERS = ["__add__", "__radd__", "__mul__", "__matmul__", "__rmatmul__", "__eq__", "__lt__", "__iadd__",
           "__abs__", "__neg__", "__pos__", "__pow__", "__ipow__", "__itruediv__", "__rtruediv__", "__hash__",
           "__getitem__", "__invert__", "__and__", "__rsub__"]


@pytest.mark.parametrize("name", DUNDERS)
def test_tensor_operator_methods_have_torchs_names(name):
    assert getattr(tg.Tensor, name).__name__ == getattr(torch.Tensor, name).__name__


def _user_function(x):
    return x


RESOLVED = {
    "Tensor.__add__": lambda lib: lib.Tensor.__add__,
    "Tensor.__rsub__": lambda lib: lib.Tensor.__rsub__,
    "linalg.norm": lambda lib: lib.linalg.norm,
    "special.erf": lambda lib: lib.special.erf,
    "fft.fft": lambda lib: lib.fft.fft,
    "add": lambda lib: lib.add,
    "nn.functional.relu": lambda lib: lib.nn.functional.relu,
    "user function": lambda lib: _user_function,
    "print": lambda lib: print,
}


@pytest.mark.parametrize("name", RESOLVED)
def test_resolve_name(name):
    assert tg.overrides.resolve_name(RESOLVED[name](tg)) == torch.overrides.resolve_name(RESOLVED[name](torch))


def test_resolve_name_of_what_a_mode_is_given():
    def names(lib):
        seen = []

        class Logger(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                seen.append(lib.overrides.resolve_name(func))
                return func(*args, **(kwargs or {}))

        with Logger():
            x = lib.ones(2)
            (x + x).pow(2).mean()
        return seen

    assert names(tg) == names(torch)


IGNORED = {
    "ones": lambda lib: lib.ones, "randn": lambda lib: lib.randn, "arange": lambda lib: lib.arange,
    "tensor": lambda lib: lib.tensor, "add": lambda lib: lib.add, "Tensor.__init__": lambda lib: lib.Tensor.__init__,
    "Tensor.new_ones": lambda lib: lib.Tensor.new_ones, "Tensor.stride": lambda lib: lib.Tensor.stride,
    "Tensor.add": lambda lib: lib.Tensor.add, "Tensor.as_subclass": lambda lib: lib.Tensor.as_subclass,
}


@pytest.mark.parametrize("name", IGNORED)
def test_ignored_functions(name):
    assert (IGNORED[name](tg) in tg.overrides.get_ignored_functions()) == (
        IGNORED[name](torch) in torch.overrides.get_ignored_functions())


def test_overridable_functions_is_a_defaultdict():
    assert type(tg.overrides.get_overridable_functions()).__name__ == type(
        torch.overrides.get_overridable_functions()).__name__
