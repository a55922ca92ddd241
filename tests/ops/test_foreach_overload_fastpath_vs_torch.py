"""``torch._foreach_*``'s choice of overload (Scalar, ScalarList, List, Tensor, ScalarAndTensor, alpha forms), which
tracegrad remembers by the classes of a call's arguments (``_arg_parser.OverloadChoice``): for argument mixes at the
edges of torch's parser (0-d tensors with and without grad, NumPy scalars, bools, complex numbers, mixed lists,
keyword forms, classes given as dtypes) the overload taken, or the error, is torch's on a first call and on a call
whose classes were seen before, whatever call came first."""

from __future__ import annotations

import collections

import pytest

from tests._lib import np, tg, torch


def _floats(lib, count: int = 2, base: float = 0.5, grad: bool = False) -> list:
    return [lib.tensor(np.linspace(base, base + 1, 3) + k, dtype=lib.float64, requires_grad=grad)
            for k in range(count)]


def _zero_dim(lib, value: float = 2.0, grad: bool = False):
    return lib.tensor(value, dtype=lib.float64, requires_grad=grad)


class _List(list):
    pass


_Pair = collections.namedtuple("_Pair", "first second")


def _parameters(lib) -> list:
    return [lib.nn.Parameter(t) for t in _floats(lib, base=1.5)]


# name -> a call of one library; each builds its own tensors
CALLS = {
    "scalar": lambda lib: lib._foreach_add(_floats(lib), 2),
    "bool scalar": lambda lib: lib._foreach_mul(_floats(lib), True),
    "complex scalar": lambda lib: lib._foreach_mul(_floats(lib), 2j),
    "numpy float32": lambda lib: lib._foreach_mul(_floats(lib), np.float32(0.25)),
    "numpy int64": lambda lib: lib._foreach_add(_floats(lib), np.int64(3)),
    "numpy bool": lambda lib: lib._foreach_add(_floats(lib), np.bool_(True)),
    "numpy complex": lambda lib: lib._foreach_add(_floats(lib), np.complex128(1 + 2j)),
    "0-d tensor": lambda lib: lib._foreach_add(_floats(lib), _zero_dim(lib)),
    "0-d tensor requiring grad": lambda lib: lib._foreach_add(_floats(lib), _zero_dim(lib, grad=True)),
    "0-d tensor, lists requiring grad": lambda lib: lib._foreach_mul(_floats(lib, grad=True), _zero_dim(lib)),
    "1-d tensor": lambda lib: lib._foreach_add(_floats(lib), _floats(lib)[0]),
    "1-d tensor to sub": lambda lib: lib._foreach_sub(_floats(lib), _floats(lib)[0]),
    "mixed numbers": lambda lib: lib._foreach_mul(_floats(lib), [1, 2.5]),
    "mixed with complex": lambda lib: lib._foreach_add(_floats(lib), [True, 2j]),
    "mixed with numpy": lambda lib: lib._foreach_mul(_floats(lib), [np.float32(1.5), 2]),
    "tuple of numbers": lambda lib: lib._foreach_div(_floats(lib), (2, 4.0)),
    "numbers and a tensor": lambda lib: lib._foreach_mul(_floats(lib), [_zero_dim(lib), 2]),
    "a tensor and numbers": lambda lib: lib._foreach_mul(_floats(lib), [2, _zero_dim(lib)]),
    "list of tensors": lambda lib: lib._foreach_mul(_floats(lib), _floats(lib, base=2.0)),
    "tensors requiring grad": lambda lib: lib._foreach_add(_floats(lib, grad=True), _floats(lib, grad=True)),
    "parameters and tensors": lambda lib: lib._foreach_add(_parameters(lib), [*_floats(lib)[:1], *_parameters(lib)[1:]]),
    # (numbers first: the Scalar[] overload, remembered, fails on tensors; the other way the List one copes)
    "list subclass of numbers": lambda lib: lib._foreach_add(_List(_floats(lib)), _List([1.0, 2.0])),
    "list subclass of tensors": lambda lib: lib._foreach_add(_List(_floats(lib)), _List(_floats(lib))),
    "namedtuple of numbers": lambda lib: lib._foreach_mul(_Pair(*_floats(lib)), _Pair(2.0, 0.5)),
    "namedtuple of tensors": lambda lib: lib._foreach_mul(_Pair(*_floats(lib)), _Pair(*_floats(lib))),
    "empty lists": lambda lib: lib._foreach_add([], []),
    "empty list and scalar": lambda lib: lib._foreach_add([], 1),
    "empty scalar list": lambda lib: lib._foreach_add(_floats(lib), []),
    "a string": lambda lib: lib._foreach_add(_floats(lib), "a"),
    "None": lambda lib: lib._foreach_add(_floats(lib), None),
    "alpha": lambda lib: lib._foreach_add(_floats(lib), _floats(lib), alpha=2),
    "numpy alpha": lambda lib: lib._foreach_sub(_floats(lib), _floats(lib), alpha=np.float64(0.5)),
    "0-d tensor alpha": lambda lib: lib._foreach_add(_floats(lib), _floats(lib), alpha=_zero_dim(lib)),
    "complex alpha": lambda lib: lib._foreach_add(_floats(lib), _floats(lib), alpha=1j),
    "string alpha": lambda lib: lib._foreach_add(_floats(lib), _floats(lib), alpha="a"),
    "alpha with a scalar": lambda lib: lib._foreach_add(_floats(lib), 2, alpha=2),
    "keyword scalar": lambda lib: lib._foreach_add(_floats(lib), scalar=2),
    "keyword scalars": lambda lib: lib._foreach_add(_floats(lib), scalars=[1, 2]),
    "keyword other": lambda lib: lib._foreach_add(_floats(lib), other=_floats(lib), alpha=3),
    "keyword self": lambda lib: lib._foreach_mul(self=_floats(lib), other=_floats(lib)),
    "unknown keyword": lambda lib: lib._foreach_add(_floats(lib), _floats(lib), beta=2),
    "lerp 0-d weight": lambda lib: lib._foreach_lerp(_floats(lib), _floats(lib, base=3.0), _zero_dim(lib, 0.25)),
    "lerp weights": lambda lib: lib._foreach_lerp(_floats(lib), _floats(lib, base=3.0), _floats(lib, base=0.1)),
    "lerp weight list": lambda lib: lib._foreach_lerp(_floats(lib), _floats(lib, base=3.0), [0.1, 1]),
    "addcmul value": lambda lib: lib._foreach_addcmul(_floats(lib), _floats(lib), _floats(lib), value=0.5),
    "addcmul packed": lambda lib: lib._foreach_addcmul(_floats(lib), _floats(lib), _floats(lib),
                                                       lib.tensor([0.5, 2.0])),
    "addcdiv 0-d value": lambda lib: lib._foreach_addcdiv(_floats(lib), _floats(lib), _floats(lib), _zero_dim(lib)),
    "addcdiv 0-d value requiring grad": lambda lib: lib._foreach_addcdiv(_floats(lib), _floats(lib), _floats(lib),
                                                                         _zero_dim(lib, grad=True)),
    "pow number base": lambda lib: lib._foreach_pow(2, _floats(lib)),
    "pow 0-d base": lambda lib: lib._foreach_pow(_zero_dim(lib, 3.0), _floats(lib)),
    "pow exponents": lambda lib: lib._foreach_pow(_floats(lib), [2, 0.5]),
    "norm dtype": lambda lib: lib._foreach_norm(_floats(lib), 2, dtype=lib.float32),
    "norm Python float dtype": lambda lib: lib._foreach_norm(_floats(lib), 2, dtype=float),
    "norm numpy dtype": lambda lib: lib._foreach_norm(_floats(lib), 2, dtype=np.float32),
    "copy_ non_blocking": lambda lib: lib._foreach_copy_(_floats(lib), _floats(lib, base=4.0), non_blocking=True),
    "copy_ int non_blocking": lambda lib: lib._foreach_copy_(_floats(lib), _floats(lib, base=4.0), non_blocking=1),
    "in-place scalar": lambda lib: lib._foreach_mul_(_floats(lib), 0.5),
    "in-place 0-d tensor": lambda lib: lib._foreach_mul_(_floats(lib), _zero_dim(lib)),
    "in-place 1-d tensor": lambda lib: lib._foreach_mul_(_floats(lib), _floats(lib)[0]),
    "in-place alpha": lambda lib: lib._foreach_add_(_floats(lib), _floats(lib), alpha=2),
    "in-place lerp": lambda lib: lib._foreach_lerp_(_floats(lib), _floats(lib, base=3.0), 0.1),
    "in-place clamp_min bool": lambda lib: lib._foreach_clamp_min_(_floats(lib), True),
}


def _outcome(lib, call) -> tuple:
    """The results' dtypes, values and nodes (the node's name tells the overload), or the error."""
    try:
        results = call(lib)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return type(exc).__name__, str(exc)
    return tuple((str(t.dtype).replace("tracegrad", "torch"), repr(t.tolist()),
                  None if t.grad_fn is None else t.grad_fn.name()) for t in results)


@pytest.mark.parametrize("name", CALLS)
def test_a_call_first_and_again(name):
    call = CALLS[name]
    expected = _outcome(torch, call)
    assert _outcome(tg, call) == expected
    assert _outcome(tg, call) == expected  # (the second time, the choice is the remembered one)


# Calls of one function whose arguments' classes agree where the choice differs: each after the other has been
# made (and remembered) must still be torch's.
PAIRS = [
    ("0-d tensor", "0-d tensor requiring grad"),
    ("0-d tensor", "1-d tensor"),
    ("1-d tensor", "in-place 1-d tensor"),
    ("addcdiv 0-d value", "addcdiv 0-d value requiring grad"),
    ("norm Python float dtype", "norm numpy dtype"),
    ("numbers and a tensor", "a tensor and numbers"),
    ("mixed numbers", "numbers and a tensor"),
    ("empty lists", "empty list and scalar"),
    ("keyword scalar", "keyword scalars"),
    ("alpha", "string alpha"),
    ("list subclass of tensors", "list subclass of numbers"),
    ("namedtuple of tensors", "namedtuple of numbers"),
]


@pytest.mark.parametrize("first,then", PAIRS + [(b, a) for a, b in PAIRS], ids=lambda name: name)
def test_a_call_after_a_similar_one(first, then):
    _outcome(tg, CALLS[first])
    assert _outcome(tg, CALLS[then]) == _outcome(torch, CALLS[then])


def test_a_repeated_call_skips_the_parse(monkeypatch):
    """An optimizer's step calls each foreach function with arguments of the same classes: after the first call,
    torch's parser is not run again (it cost 5-25 us a call, more than some foreach kernels)."""
    from tracegrad import _arg_parser

    parses = []
    parse = _arg_parser._parse
    monkeypatch.setattr(_arg_parser, "_parse", lambda *args, **kwargs: parses.append(1) or parse(*args, **kwargs))
    xs, ys = _floats(tg), _floats(tg, base=2.0)
    tg._foreach_add_(xs, ys, alpha=2)
    tg._foreach_mul_(xs, 0.5)
    del parses[:]
    for _ in range(3):
        tg._foreach_add_(xs, ys, alpha=2)
        tg._foreach_mul_(xs, 0.5)
    assert not parses
