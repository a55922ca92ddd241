"""Where and how often tracegrad's warnings are shown, against torch (found by ``tools/warning_sweep.py``).

torch shows a warning its C++ code raises (TORCH_WARN, TORCH_WARN_ONCE) at the innermost Python frame: the user's
line, or a line of torch's own Python code that called the operator. A warning shown inside tracegrad's files where
torch shows it at the user's line is a bug; where torch shows it in its own files, tracegrad may show it at the
user's line or in its own. TORCH_WARN_ONCE warns once a process per call site (``cross`` but not ``cross_out``;
``chain_matmul`` and ``chain_matmul_out`` each once), which the last tests check in fresh processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

import tracegrad as tg

_USER_FILE = "<user program>"
_DIRS = {"torch": os.path.dirname(torch.__file__) + os.sep, "tracegrad": os.path.dirname(tg.__file__) + os.sep}


def _place(filename: str) -> str:
    return next((name for name, prefix in _DIRS.items() if filename.startswith(prefix)), "user")


def _first_words(message: str) -> str:
    """The message's first line, without the C++ source location torch appends."""
    return message.split(" (Triggered internally at ")[0].split("\n")[0]


def shown(lib, source: str) -> list[tuple[str, str, str]]:
    """(category, first line, where shown) of each warning ``source`` raises with ``lib`` as ``torch``, with
    warn-always on (TORCH_WARN_ONCE then warns every time)."""
    code = compile(textwrap.dedent(source), _USER_FILE, "exec")
    was = lib.is_warn_always_enabled()
    lib.set_warn_always(True)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            exec(code, {"torch": lib, "__name__": "user_program"})
    finally:
        lib.set_warn_always(was)
    return [(w.category.__name__, _first_words(str(w.message)), _place(w.filename)) for w in caught]


def assert_shown_as_torch(source: str) -> None:
    ours, theirs = shown(tg, source), shown(torch, source)
    assert [w[:2] for w in ours] == [w[:2] for w in theirs]
    for (_, message, place), (_, _, torch_place) in zip(ours, theirs):
        allowed = {"user"} if torch_place == "user" else {"user", "tracegrad"}
        assert place in allowed, f"{message!r} shown in {place}, torch: {torch_place}"
    assert theirs, "the program warns"


LOCATIONS = {
    "cross without dim": "a = torch.ones(3, 4); torch.cross(a, a); a.cross(a)",
    "where uint8 condition": """
        c = torch.tensor([1, 0], dtype=torch.uint8); x = torch.ones(2)
        torch.where(c, x, x); x.where(c, x); torch.where(c, x, x, out=torch.empty(2))""",
    "cov degrees of freedom": "torch.cov(torch.ones(2, 1)); torch.ones(2, 1).cov()",
    "var/std degrees of freedom": """
        x = torch.ones(1)
        torch.var(x); x.std(0); torch.var_mean(x); torch.std_mean(x, dim=0); torch.var(x, 0, out=torch.empty(()))""",
    "triangular_solve": "a = torch.eye(2); torch.triangular_solve(a, a); a.triangular_solve(a)",
    "triangular_solve out= resized before the warning":
        "a = torch.eye(2); torch.triangular_solve(a, a, out=(torch.empty(1), torch.empty(1)))",
    "lu_solve": "a = torch.eye(2); LU, p = torch.linalg.lu_factor(a); torch.lu_solve(a, LU, p); a.lu_solve(LU, p)",
    "Tensor.lu": "torch.eye(2).lu()",
    "nuclear_norm": "a = torch.eye(2); torch.nuclear_norm(a); torch.nuclear_norm(a, out=torch.empty(()))",
    "frobenius_norm": "a = torch.eye(2); torch.frobenius_norm(a, (0, 1)); torch.frobenius_norm(a, (0, 1), "
                      "out=torch.empty(()))",
    "istft without window": """
        s = torch.stft(torch.ones(64), 16, window=torch.hann_window(16), return_complex=True)
        torch.istft(s, 16); s.istft(16)""",
    "LSTM projections under a TorchFunctionMode": """
        class Passing(torch.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        m = torch.nn.LSTM(4, 6, proj_size=3)
        with Passing():
            m(torch.ones(5, 2, 4))""",
    "torch.lstm with projections": """
        m = torch.nn.LSTM(4, 6, proj_size=3)
        h = (torch.zeros(1, 2, 3), torch.zeros(1, 2, 6))
        torch.lstm(torch.ones(5, 2, 4), h, m._flat_weights, True, 1, 0.0, False, False, False)""",
    "conv padding='same' with an even kernel": """
        torch.nn.functional.conv1d(torch.ones(1, 1, 5), torch.ones(1, 1, 2), padding='same')
        torch.conv3d(torch.ones(1, 2, 2, 2, dtype=torch.complex128), torch.ones(1, 1, 2, 1, 1,
                     dtype=torch.complex128), padding='same')""",
    "asarray of a tensor requiring grad": "torch.asarray(torch.ones(2, requires_grad=True))",
    "is_pinned with a device": "torch.ones(2).is_pinned('cpu')",
    "mT and mH of a 0-d tensor": "x = torch.ones(()); x.mT; x.mH; x.T",
    "mark_dirty of a non-input": """
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x * 1
                ctx.mark_dirty(y)
                return y
            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(torch.ones(2, requires_grad=True))""",
    "mark_shared_storage": """
        class F(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_shared_storage((x, x))
                return x * 1
            @staticmethod
            def backward(ctx, g):
                return g
        F.apply(torch.ones(2, requires_grad=True))""",
    "full backward hook without input gradients": """
        m = torch.nn.Linear(2, 2); m.register_full_backward_hook(lambda *a: None)
        m(torch.ones(1, 2)).sum().backward()""",
    "kaiming init of a zero-element tensor":
        "torch.nn.init.kaiming_uniform_(torch.empty(0, 3)); torch.nn.init.kaiming_normal_(torch.empty(0, 3))",
}


@pytest.mark.parametrize("source", LOCATIONS.values(), ids=LOCATIONS.keys())
def test_warning_shown_where_torch_shows_it(source: str) -> None:
    assert_shown_as_torch(source)


# ---- how often: fresh processes, as TORCH_WARN_ONCE's state cannot be reset --------------------------------------

# Each program is a list of statements; the counts of warnings each one raises are compared.
COUNTS = {
    "cross: once, and never from cross_out": ["a = torch.ones(3)", "torch.cross(a, a)", "a.cross(a)",
                                              "torch.cross(a, a, out=torch.empty(3))"],
    "cross_out first": ["a = torch.ones(3)", "torch.cross(a, a, out=torch.empty(3))", "torch.cross(a, a)"],
    "chain_matmul and its out= each once": ["a = torch.eye(2)", "torch.chain_matmul(a, a)", "torch.chain_matmul(a, a)",
                                            "torch.chain_matmul(a, a, out=torch.empty(2, 2))",
                                            "torch.chain_matmul(a, a, out=torch.empty(2, 2))"],
    "nuclear_norm and its out= each once": ["a = torch.eye(2)", "torch.nuclear_norm(a)", "torch.nuclear_norm(a)",
                                            "torch.nuclear_norm(a, out=torch.empty(()))",
                                            "torch.nuclear_norm(a, out=torch.empty(()))"],
    "frobenius_norm and its out= each once": ["a = torch.eye(2)", "torch.frobenius_norm(a, (0, 1))",
                                              "torch.frobenius_norm(a, (0, 1), out=torch.empty(()))",
                                              "torch.frobenius_norm(a, (0, 1))"],
    "lu_solve and its out= each once": ["a = torch.eye(2); LU, p = torch.linalg.lu_factor(a)",
                                        "torch.lu_solve(a, LU, p)", "torch.lu_solve(a, LU, p, out=torch.empty(2, 2))",
                                        "torch.lu_solve(a, LU, p)"],
    "Tensor.lu and torch.lu share one": ["a = torch.eye(2)", "a.lu()", "torch.lu(a)"],
    "warn-always does not use up a once-a-process warning": [
        "x = torch.ones(())", "torch.set_warn_always(True)", "x.mT", "torch.set_warn_always(False)", "x.mT", "x.mT"],
    "storage() once even with warn-always": ["torch.set_warn_always(True)", "torch.ones(2).storage()",
                                             "torch.ones(2).storage()"],
}

# (one process per library, forked once per program so that their once-a-process warnings do not meet)
_COUNTING_PROGRAM = """
import json, os, sys, warnings
import {lib} as torch

def counts(statements):
    found, namespace = [], {{"torch": torch}}
    for statement in statements:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                exec(statement, namespace)
            except Exception as exc:
                return repr(exc)
        found.append(len(caught))
    return found

result = {{}}
for name, statements in json.loads(sys.argv[1]).items():
    read, write = os.pipe()
    if os.fork() == 0:
        os.write(write, json.dumps(counts(statements)).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        result[name] = json.loads(pipe.read())
    os.wait()
print(json.dumps(result))
"""


def _counts(lib: str) -> dict:
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", _COUNTING_PROGRAM.format(lib=lib), json.dumps(COUNTS)],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def counts() -> tuple[dict, dict]:
    return _counts("tracegrad"), _counts("torch")


@pytest.mark.parametrize("name", COUNTS)
def test_warned_as_often_as_torch(counts, name: str) -> None:
    ours, theirs = counts
    assert ours[name] == theirs[name]
