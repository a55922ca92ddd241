"""``torch.return_types`` as torch's: every structseq class an attribute (``max``, ``topk``, ``linalg_eigh``, the
``*_out`` ones...), with torch's fields, the class of what the operators return (``max_out`` for an out= call,
``qr``/``slogdet`` for the legacy functions), printed as torch's, and pickled and unpickled as the same class (by name; the class,
whose module reads torch's, is not picklable itself)."""

from __future__ import annotations

import pickle
import warnings

import pytest
from _lib import tg, torch


def _torch_return_types() -> dict[str, type]:
    return {name: cls for name, cls in vars(torch.return_types).items()
            if isinstance(cls, type) and issubclass(cls, tuple) and cls.__module__ == "torch.return_types"
            and name != "_attr"}  # (torch's module's loop variable: its last class again)


TORCH_TYPES = _torch_return_types()


def test_every_return_type_is_an_attribute_with_torchs_fields():
    for name, cls in TORCH_TYPES.items():
        ours = getattr(tg.return_types, name)
        assert ours.__name__ == name
        assert ours.__match_args__ == cls.__match_args__, name
        assert issubclass(ours, tuple)
        assert tg.utils._pytree.is_structseq_class(ours), name
    assert sorted(tg.return_types.__all__) == sorted(torch.return_types.__all__)
    assert len(tg.return_types.all_return_types) == len(torch.return_types.all_return_types)


@pytest.mark.parametrize("name", sorted(TORCH_TYPES))
def test_pickle_round_trip_and_repr(name):
    def made(lib):
        fields = getattr(torch.return_types, name).__match_args__
        values = tuple(lib.tensor([float(i)]) for i in range(len(fields)))
        cls = getattr(lib.return_types, name)
        return cls(values)

    ours = made(tg)
    back = pickle.loads(pickle.dumps(ours))
    assert type(back) is getattr(tg.return_types, name)
    assert repr(back) == repr(made(torch))
    assert (type(ours).__module__, type(ours).__qualname__) == (type(made(torch)).__module__, name)


def _calls(lib):
    lib.manual_seed(0)
    x = lib.randn(4, 4)
    s = x @ x.T + 4 * lib.eye(4)
    b = lib.randn(4, 2)
    return {
        "max": lambda **k: lib.max(x, 0, **k), "min": lambda **k: lib.min(x, 0, **k),
        "sort": lambda **k: lib.sort(x, **k), "topk": lambda **k: lib.topk(x, 2, **k),
        "kthvalue": lambda **k: lib.kthvalue(x, 2, **k), "median": lambda **k: lib.median(x, 0, **k),
        "mode": lambda **k: lib.mode(x, 0, **k), "cummin": lambda **k: lib.cummin(x, 0, **k),
        "aminmax": lambda **k: lib.aminmax(x, **k), "frexp": lambda **k: lib.frexp(x, **k),
        "geqrf": lambda **k: lib.geqrf(x, **k), "histogram": lambda **k: lib.histogram(x.flatten(), **k),
        "linalg.eigh": lambda **k: lib.linalg.eigh(s, **k), "linalg.eig": lambda **k: lib.linalg.eig(s, **k),
        "linalg.cholesky_ex": lambda **k: lib.linalg.cholesky_ex(s, **k),
        "linalg.inv_ex": lambda **k: lib.linalg.inv_ex(s, **k),
        "linalg.ldl_factor": lambda **k: lib.linalg.ldl_factor(s, **k),
        "linalg.lu_factor": lambda **k: lib.linalg.lu_factor(s, **k),
        "linalg.qr": lambda **k: lib.linalg.qr(s, **k), "linalg.svd": lambda **k: lib.linalg.svd(s, **k),
        "linalg.slogdet": lambda **k: lib.linalg.slogdet(s, **k), "slogdet": lambda **k: lib.slogdet(s, **k),
        "qr": lambda **k: lib.qr(s, **k),
        "svd": lambda **k: lib.svd(s, **k), "triangular_solve": lambda **k: lib.triangular_solve(b, s, **k),
        "lu_unpack": lambda **k: lib.lu_unpack(*lib.linalg.lu_factor(s), **k),
    }


def _classes(lib, name):
    call = _calls(lib)[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = call()
        into = call(out=tuple(t.new_empty(0) for t in plain))
    return (type(plain).__name__, type(into).__name__, isinstance(plain, getattr(lib.return_types, type(plain).__name__)),
            isinstance(into, getattr(lib.return_types, type(into).__name__)))


@pytest.mark.parametrize("name", sorted(_calls(torch)))
def test_classes_of_results_and_out_results(name):
    assert _classes(tg, name) == _classes(torch, name)


def test_methods_return_torchs_classes():
    def classes(lib):
        s = lib.eye(3) * 2
        return [type(r).__name__ for r in (s.slogdet(), s.qr(), s.max(0), s.sort(), s.svd(), s.geqrf())]

    assert classes(tg) == classes(torch)
