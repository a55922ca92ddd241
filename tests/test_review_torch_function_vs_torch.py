"""Review of the ``__torch_function__`` protocol against torch: a subclass's repr, format, pickle, copy and deepcopy;
data factories given a subclass; ``as_subclass`` inside a handler (the unwrap/rewrap idiom); ``torch.autograd.grad``
through the protocol; warnings of plain-tensor calls at the user's line while the routing wrappers are in place."""

from __future__ import annotations

import copy
import pickle
import warnings

from _lib import tg, to_numpy, torch


def _subclass(lib, name: str = "MyT") -> type:
    return type(name, (lib.Tensor,), {})


def _printing(lib) -> list:
    MyT = _subclass(lib)
    y = lib.arange(3.0).as_subclass(MyT)
    z = lib.ones(2, requires_grad=True).as_subclass(MyT) * 2
    big = lib.arange(12.0).reshape(3, 4).as_subclass(MyT)
    spec = []
    for value, fmt in ((y[0], ".2f"), (y[0], ""), (lib.tensor(1.5), ".1f")):
        try:
            spec.append(format(value, fmt))
        except TypeError as exc:
            spec.append(str(exc))
    return [repr(y), str(z), repr(big), repr(lib.nn.Parameter(lib.ones(2))), *spec]


def test_subclass_repr_and_format():
    assert _printing(tg) == _printing(torch)


def _copies(lib) -> list:
    MyT = _subclass(lib, "_PickledT")
    MyT.__module__ = __name__
    globals()["_PickledT"] = MyT  # (pickle finds a class by its module's attribute; removed after)
    try:
        y = lib.arange(3.0).as_subclass(MyT)
        y.tag = "kept"
        out = []
        for make in (lambda v: pickle.loads(pickle.dumps(v)), copy.copy):
            c = make(y)
            out.append((type(c).__name__, to_numpy(c).tolist(), getattr(c, "tag", None), c.is_leaf))
        try:
            copy.deepcopy(y)
        except RuntimeError as exc:
            out.append(str(exc))
        return out
    finally:
        del globals()["_PickledT"]


def test_subclass_pickle_copy_deepcopy():
    assert _copies(tg) == _copies(torch)


def _data_factories(lib) -> list:
    MyT = _subclass(lib)
    y = lib.arange(3.0).as_subclass(MyT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        made = [lib.tensor(y), lib.as_tensor(y), lib.as_tensor(y, dtype=lib.float64), lib.asarray(y, dtype=lib.float64),
                lib.tensor([y[0], y[1]]), lib.ones(1).new_tensor(y), y.new_tensor([1.0])]
    return [type(t).__name__ for t in made]


def test_data_factories_copy_a_subclass_as_plain():
    assert _data_factories(tg) == _data_factories(torch)


def _logging_mode(lib) -> type:
    """A TorchFunctionMode that notes the name of each function it sees, then runs it."""
    class Log(lib.overrides.TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.log = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.log.append(func.__name__)
            return func(*args, **(kwargs or {}))

    return Log


def _unwrap_rewrap(lib) -> list:
    class Wrap(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            def unwrap(a):
                return a.as_subclass(lib.Tensor) if isinstance(a, Wrap) else a

            result = func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})
            return result.as_subclass(Wrap) if isinstance(result, lib.Tensor) else result

    Log = _logging_mode(lib)
    w = lib.arange(4.0).as_subclass(Wrap)
    with Log() as mode:
        lib.ones(2).as_subclass(Wrap)
    return [type(v).__name__ for v in (w + 1, w.sum(), w[0], w.view(2, 2))] + [repr(w), w.tolist(), mode.log]


def test_as_subclass_is_out_of_the_protocol():
    assert _unwrap_rewrap(tg) == _unwrap_rewrap(torch)


def _autograd_grad(lib) -> list:
    class MyParam(lib.Tensor):
        def __new__(cls, data):
            return lib.Tensor._make_subclass(cls, data, True)

    Log = _logging_mode(lib)
    p = MyParam(lib.tensor([1.0, 2.0]))
    first = lib.autograd.grad((p ** 3).sum(), p, create_graph=True)[0]
    second = lib.autograd.grad(first.sum(), [p])
    plain = lib.ones(2, requires_grad=True)
    with Log() as mode:
        lib.autograd.grad((plain * 2).sum(), plain)
        lib.autograd.backward((plain * 2).sum())
    return [type(first).__name__, type(second[0]).__name__, to_numpy(second[0]).tolist(), mode.log]


def test_autograd_grad_goes_through_the_protocol():
    assert _autograd_grad(tg) == _autograd_grad(torch)


def _warning_lines(lib) -> list:
    MyT = _subclass(lib)  # (the protocol is live: plain-tensor calls go through the routing wrappers)
    x = lib.ones(3, requires_grad=True)
    seen = []
    for call in (lambda: lib.tensor(x), lambda: (x * 2).grad, lambda: lib.nn.functional.softmax(x),
                 lambda: x.new_tensor(x), lambda: lib.range(0, 2)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            call()
        seen.append([(w.filename, w.lineno) for w in caught])
    del MyT
    return seen


def test_warnings_of_plain_tensors_point_at_the_user_while_live():
    assert _warning_lines(tg) == _warning_lines(torch)
