"""Review of c675f36/b7e6f08 (igamma as ATen's calc_igamma) and 4e85c83 (subclass parameters), against torch.

- igamma's FMAs by ATen's build and loop (measured on torch 2.13): the AVX-512 build's vector loop fuses, its tail
  does not; the AVX2 build's vector loop does not; both builds' outer scalar loop (strided operands, a 0-d result)
  does; the DEFAULT build never does, igammac's DEFAULT build neither (before: strided and 0-d igamma unfused,
  AVX2's vector loop and the DEFAULT build's igammac fused). Each capability in a subprocess that sets
  ``ATEN_CPU_CAPABILITY`` before importing either library, as a CI machine without AVX-512 runs.
- A Tensor subclass made a parameter keeps its mark (``_is_param``) through pickle, deepcopy and torch.save/load,
  as torch's ``__dict__`` state does (before: dropped, no longer a Parameter), and prints as torch prints it:
  ``Parameter(Sub(...))``, a Parameter subclass's ``Parameter containing:\\nParameter(P(...))``.
"""

from __future__ import annotations

import copy
import io
import os
import pickle
import subprocess
import sys

import pytest
from _lib import tg, torch

_CAPABILITY_SCRIPT = r"""
import numpy as np, torch, tracegrad as tg
rng = np.random.default_rng(0)
a = np.exp(rng.uniform(-5, 6, 2000)); x = a * np.exp(rng.uniform(-2, 2, 2000))
bad = []
for dt in ("float32", "float64"):
    A, X = a.astype(dt), x.astype(dt)
    cases = {
        "contiguous": lambda L: (L.tensor(A[:1000]), L.tensor(X[:1000])),
        "tails": lambda L: (L.tensor(A[:8 * 47]).reshape(8, 47)[:, :40], L.tensor(X[:8 * 47]).reshape(8, 47)[:, :40]),
        "strided": lambda L: (L.tensor(A[:1000])[::2], L.tensor(X[:500])),
        "mixed layouts": lambda L: (L.tensor(A[:400]).reshape(10, 40).t(), L.tensor(X[:400]).reshape(40, 10)),
        "broadcast": lambda L: (L.tensor(A[:5]).reshape(5, 1), L.tensor(X[:300])),
    }
    for case, make in cases.items():
        for fn in ("igamma", "igammac"):
            r = [getattr(L, fn)(*make(L)).numpy() for L in (tg, torch)]
            if not np.array_equal(*r, equal_nan=True):
                bad.append((dt, case, fn))
    for i in range(100):
        for fn in ("igamma", "igammac"):
            r = [getattr(L, fn)(L.tensor(A[i]), L.tensor(X[i])).item() for L in (tg, torch)]
            if r[0] != r[1]:
                bad.append((dt, "0-d", fn, i))
print(bad[:10])
"""


@pytest.mark.parametrize("capability", ["avx512", "avx2", "default"])
def test_igamma_fmas_follow_the_build_and_loop_torch_dispatches_to(capability):
    src = os.path.dirname(os.path.dirname(tg.__file__))  # (the tracegrad under test, not an installed one)
    env = dict(os.environ, ATEN_CPU_CAPABILITY=capability,
               PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _CAPABILITY_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.fixture
def sub_parameter():
    """A parameter of a Tensor subclass per library, its class reachable by pickle while the test runs (a
    module-level class would keep the __torch_function__ protocol live for every later test)."""
    made = {}
    for lib, name in ((tg, "TgSub"), (torch, "TorchSub")):
        def new_empty(self, *args, cls=name, **kwargs):  # (torch's deepcopy asks a subclass for one of its own)
            return super(type(self), self).new_empty(*args, **kwargs).as_subclass(globals()[cls])

        made[lib] = globals()[name] = type(name, (lib.Tensor,), {"new_empty": new_empty, "__module__": __name__})
    yield lambda lib: lib.nn.Parameter(lib.zeros(2).as_subclass(made[lib]))
    del globals()["TgSub"], globals()["TorchSub"]


def _saved_and_loaded(lib, p):
    buffer = io.BytesIO()
    lib.save({"p": p}, buffer)
    buffer.seek(0)
    return lib.load(buffer, weights_only=False)["p"]


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "save"])
def test_subclass_parameter_stays_a_parameter_through_copies(how, sub_parameter):
    copies = {"pickle": lambda lib, p: pickle.loads(pickle.dumps(p)), "deepcopy": lambda lib, p: copy.deepcopy(p),
              "save": _saved_and_loaded}[how]
    results = []
    for lib in (tg, torch):
        q = copies(lib, sub_parameter(lib))
        results.append((type(q).__name__, isinstance(q, lib.nn.Parameter), q.requires_grad))
    assert results == [("TgSub", True, True), ("TorchSub", True, True)]


def test_subclass_parameter_repr():
    def reprs(lib):
        class Sub(lib.Tensor):
            pass

        class P(lib.nn.Parameter):
            pass

        return [repr(lib.nn.Parameter(lib.zeros(2).as_subclass(Sub))),
                repr(lib.nn.Parameter(lib.zeros(2, dtype=lib.float64).as_subclass(Sub), requires_grad=False)),
                repr(P(lib.zeros(2, 3))), repr(P(lib.zeros(2), requires_grad=False)),
                repr(lib.nn.Parameter(lib.zeros(2, 3)))]

    assert reprs(tg) == reprs(torch)
