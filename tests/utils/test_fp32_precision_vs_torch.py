"""The float32 precision settings against torch's: the legacy API (``set/get_float32_matmul_precision``,
``backends.cuda.matmul.allow_tf32``, ``backends.cudnn.allow_tf32``) and the new one (``fp32_precision`` of
``torch.backends`` and of its cuda.matmul, cudnn, cudnn.conv, cudnn.rnn, mkldnn, mkldnn.matmul/conv/rnn nodes),
which write into one state and refuse legacy reads once a mix of the two has made it ambiguous.

Sequences of settings and reads, hand-written and drawn from seeds, run on both libraries from one state; every
step's outcome (value or error type and message, and the warnings) is compared. In this process that state is a
new process's as far as it can be restored (cuDNN's conv and rnn nodes, unset in a new process, cannot be unset
again); each test restores both libraries' state as it found it (other tests read these values). One test runs
sequences in a new process, each in a forked copy of its untouched state.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from _lib import tg, torch, warning_texts
from _precision_state import FRESH, NODES, precisions_kept, restore_state, saved_state


@pytest.fixture(autouse=True)
def precisions_restored():
    """Both libraries' state, after the test, as it was before."""
    with precisions_kept(tg, torch):
        yield


def _attribute(path: str):
    """``lib -> (object, attribute name)`` for a dotted path under ``lib`` ("backends.cudnn.conv.fp32_precision")."""
    *parents, name = path.split(".")

    def owner(lib):
        target = lib
        for part in parents:
            target = getattr(target, part)
        return target, name

    return owner


# the new API's attributes, and the nodes they read (the mkldnn module's own one writes the generic node)
NEW_API = ["backends.fp32_precision", "backends.cuda.matmul.fp32_precision", "backends.cudnn.fp32_precision",
           "backends.cudnn.conv.fp32_precision", "backends.cudnn.rnn.fp32_precision",
           "backends.mkldnn.fp32_precision", "backends.mkldnn.matmul.fp32_precision",
           "backends.mkldnn.conv.fp32_precision", "backends.mkldnn.rnn.fp32_precision"]
LEGACY_FLAGS = ["backends.cuda.matmul.allow_tf32", "backends.cudnn.allow_tf32"]


def _reader(path: str):
    owner = _attribute(path)
    return path, lambda lib: getattr(*owner(lib))


def _setter(path: str, value):
    owner = _attribute(path)
    return f"{path} = {value!r}", lambda lib: setattr(*owner(lib), value)


def _call(label: str, path: str, *args, **kwargs):
    owner = _attribute(path)
    return label, lambda lib: getattr(*owner(lib))(*args, **kwargs)


READS = [("get_float32_matmul_precision()", lambda lib: lib.get_float32_matmul_precision()),
         *(_reader(path) for path in LEGACY_FLAGS + NEW_API)]

PRECISION_VALUES = ["none", "ieee", "tf32", "bf16", "fp16", None]
SETTINGS = [
    *(_call(f"set_float32_matmul_precision({v!r})", "set_float32_matmul_precision", v)
      for v in ("highest", "high", "medium", "HIGH", "bogus", 1, b"medium")),
    *(_setter(path, v) for path in LEGACY_FLAGS for v in (True, False, 1)),
    *(_setter(path, v) for path in NEW_API for v in PRECISION_VALUES),
    *(_call(f"_set_fp32_precision_setter{node + (v,)}", "_C._set_fp32_precision_setter", *node, v)
      for node in NODES for v in ("none", "ieee", "tf32", "bf16")),
    *(_call(f"mkldnn.set_flags(_fp32_precision={v!r})", "backends.mkldnn.set_flags", _fp32_precision=v)
      for v in ("none", "ieee", "tf32", "bf16", None)),
    *(_call(f"backends.set_flags({v!r})", "backends.set_flags", v) for v in ("ieee", "bf16")),
]


def _outcome(step, lib) -> tuple:
    """What one step gives in ``lib``: ("ok", repr of its result) or the error's type and message, and the
    warnings it raised (without torch's "Triggered internally" suffix)."""
    _, run = step
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", repr(run(lib)))
        except Exception as error:  # noqa: BLE001 - the error is the outcome compared
            result = (type(error).__name__, str(error))
    return (*result, warning_texts(caught))


def _transcript(steps: list, lib) -> list:
    """Each step's outcome, each followed by every read (a step is a (label, run) pair or a ``_Block``)."""
    log = []
    for step in steps:
        if isinstance(step, _Block):
            log += step.transcript(lib)
        else:
            log.append((step[0], _outcome(step, lib)))
        log += [(read[0], _outcome(read, lib)) for read in READS]
    return log


class _Block:
    """``with <context manager>: <steps>``, its entry and exit failures recorded as outcomes."""

    def __init__(self, label: str, make, steps: list) -> None:
        self.label, self.make, self.steps = label, make, steps

    def transcript(self, lib) -> list:
        log = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with self.make(lib):
                    log.append((f"enter {self.label}", "ok"))
                    log += _transcript(self.steps, lib)
            except Exception as error:  # noqa: BLE001 - compared
                log.append((f"{self.label} raised", type(error).__name__, str(error)))
        return [*log, (f"warnings of {self.label}", warning_texts(caught))]


def _block(label: str, path: str, steps: list, **kwargs) -> _Block:
    owner = _attribute(path)
    return _Block(f"{path}({label})", lambda lib: getattr(*owner(lib))(**kwargs), steps)


def _fresh_transcript(steps: list, lib) -> list:
    restore_state(lib, FRESH)
    return _transcript(steps, lib)


def _assert_same_transcript(steps: list) -> None:
    """The steps give the same outcomes in both libraries, each starting from a new process's state."""
    _assert_same_outcomes(_fresh_transcript(steps, tg), _fresh_transcript(steps, torch))


def _assert_same_outcomes(ours: list, theirs: list) -> None:
    for a, b in zip(ours, theirs, strict=True):
        assert a == b


def _step(label: str) -> tuple:
    return next(step for step in SETTINGS if step[0] == label)


HAND_WRITTEN = {
    # the legacy matmul precision writes both matmul nodes
    "legacy_writes_nodes": ["set_float32_matmul_precision('high')", "set_float32_matmul_precision('medium')",
                            "set_float32_matmul_precision('highest')"],
    # a node set to tf32 under the "highest" legacy value: the legacy reads refuse to answer
    "mixed_matmul": ["backends.cuda.matmul.fp32_precision = 'tf32'", "backends.cuda.matmul.allow_tf32 = True",
                     "backends.mkldnn.matmul.fp32_precision = 'bf16'", "set_float32_matmul_precision('medium')"],
    # cuDNN's legacy flag against its conv and rnn nodes
    "mixed_cudnn": ["backends.cudnn.conv.fp32_precision = 'ieee'", "backends.cudnn.rnn.fp32_precision = 'ieee'",
                    "backends.cudnn.allow_tf32 = False", "backends.cudnn.conv.fp32_precision = 'tf32'",
                    "backends.cudnn.allow_tf32 = True"],
    # inheritance: none reads the backend's, then the generic one; cuda reads an inherited bf16 as none
    "inheritance": ["backends.fp32_precision = 'bf16'", "backends.cudnn.fp32_precision = 'tf32'",
                    "backends.cudnn.conv.fp32_precision = 'none'", "backends.fp32_precision = 'ieee'",
                    "mkldnn.set_flags(_fp32_precision='tf32')", "backends.mkldnn.fp32_precision = 'bf16'"],
    # cuDNN's nodes, unset in a new process, read their parents' precision, else tf32, until set
    "unset_cudnn_nodes": ["backends.fp32_precision = 'ieee'", "backends.cudnn.fp32_precision = 'none'",
                          "backends.fp32_precision = 'bf16'", "backends.cudnn.rnn.fp32_precision = 'none'",
                          "backends.fp32_precision = 'none'", "backends.cudnn.fp32_precision = 'ieee'",
                          "backends.cudnn.conv.fp32_precision = 'ieee'", "backends.cudnn.fp32_precision = 'none'"],
    # refusals: unknown names, cuda's bf16, the generic backend's operators, wrong types, unknown legacy values
    "refusals": ["backends.cuda.matmul.fp32_precision = 'bf16'", "backends.cudnn.conv.fp32_precision = 'fp16'",
                 "backends.mkldnn.rnn.fp32_precision = None", "backends.cudnn.allow_tf32 = 1",
                 "set_float32_matmul_precision('HIGH')", "set_float32_matmul_precision(1)",
                 "set_float32_matmul_precision(b'medium')"],
}


@pytest.mark.parametrize("name", HAND_WRITTEN)
def test_hand_written_sequence_matches_torch(name):
    _assert_same_transcript([_step(label) for label in HAND_WRITTEN[name]])


def test_binding_refusals_match_torch():
    calls = [("_C._get_fp32_precision_getter", args) for args in
             [("generic", "matmul"), ("generic", "conv"), ("foo", "all"), ("cuda", "foo"), ("foo", "foo"),
              ("cuda",), ("cuda", 1), ("cuda", b"matmul"), ()]]
    calls += [("_C._set_fp32_precision_setter", args) for args in
              [("foo", "foo", "foo"), ("foo", "foo", "ieee"), ("foo", "all", "ieee"), ("generic", "rnn", "bf16"),
               ("cuda", "all", "bf16"), ("cuda", "rnn", None), ("mkldnn", "all"), ("cuda", "all", bytearray(b"tf32"))]]
    steps = [_call(f"{path}{args}", path, *args) for path, args in calls]
    steps += [_call("getter(backend=..., op=...)", "_C._get_fp32_precision_getter", backend="cuda", op="all"),
              _call("setter('cuda', 'all', p=...)", "_C._set_fp32_precision_setter", "cuda", "all", p="ieee"),
              _setter("backends.cudnn.conv.nope", 1), _reader("backends.mkldnn.matmul.nope"),
              _reader("backends.cudnn.conv.backend"), _reader("backends.mkldnn.rnn.op")]
    _assert_same_transcript(steps)


def test_flags_context_managers_restore_as_torch():
    """Each ``flags()`` writes back on exit what it read on entry: the node's value as it read, not its own
    (a "none" that read its parent's comes back as that value), and refuses to enter where its read refuses."""
    inner = [_step("backends.cudnn.fp32_precision = 'ieee'"), _step("backends.mkldnn.matmul.fp32_precision = 'bf16'")]
    _assert_same_transcript([
        _step("backends.fp32_precision = 'tf32'"),
        _block("", "backends.cudnn.flags", inner),
        _block("fp32_precision='bf16'", "backends.mkldnn.flags", inner, fp32_precision="bf16"),
        _block("fp32_precision='ieee'", "backends.flags", inner, fp32_precision="ieee"),
        _block("allow_tf32=False", "backends.cudnn.flags", inner, allow_tf32=False, fp32_precision="tf32"),
        _step("backends.cudnn.conv.fp32_precision = 'ieee'"),
        _block("", "backends.cudnn.flags", inner),  # (cuDNN's flag is read first: refused in a mixed state)
        _block("fp32_precision='bf16'", "backends.cudnn.flags", inner, fp32_precision="bf16"),
    ])


def _random_steps(rng: random.Random, length: int, depth: int = 0) -> list:
    steps = []
    for _ in range(length):
        if depth == 0 and rng.random() < 0.1:
            kind = rng.choice([("backends.flags", {"fp32_precision": rng.choice(["none", "ieee", "tf32", "bf16"])}),
                               ("backends.cudnn.flags", {"allow_tf32": rng.choice([True, False]),
                                                         "fp32_precision": rng.choice(["none", "ieee", "tf32"])}),
                               ("backends.mkldnn.flags", {"fp32_precision": rng.choice(["none", "ieee", "bf16"])})])
            steps.append(_block(repr(kind[1]), kind[0], _random_steps(rng, rng.randint(0, 3), 1), **kind[1]))
        else:
            steps.append(rng.choice(SETTINGS))
    return steps


@pytest.mark.parametrize("seed", range(8))
def test_random_sequences_match_torch(seed):
    rng = random.Random(seed)
    for _ in range(30):
        _assert_same_transcript(_random_steps(rng, 10))


def test_saved_state_round_trips():
    """The helpers the tests restore with: a state saved, scrambled and restored reads the same in both."""
    rng = random.Random(7)
    for _ in range(10):
        first, scramble = _random_steps(rng, 10), _random_steps(rng, 10)
        saved = []
        for lib in (tg, torch):
            _fresh_transcript(first, lib)
            saved.append(saved_state(lib))
            _transcript(scramble, lib)
            restore_state(lib, saved[-1])
            assert saved_state(lib) == saved[-1]
        assert saved[0] == saved[1]


def _in_forked_child(run) -> list:
    """``run()``'s JSON result, computed in a forked copy of this process (whose state it may change)."""
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: write the result, and exit without running anything of the parent's
        os.close(readable)
        try:
            with os.fdopen(writable, "w") as out:
                json.dump(run(), out)
        finally:
            os._exit(0)
    os.close(writable)
    with os.fdopen(readable) as result:
        text = result.read()
    os.waitpid(pid, 0)
    return json.loads(text)


def pristine_transcripts() -> list:
    """[(tracegrad's transcript, torch's)] of the hand-written sequences and some random ones, each library from
    the untouched state of the process this runs in (a new one: see the test below). One child runs both
    libraries (neither changes the other's state), but where they are one (the oracle's self-test)."""
    rng = random.Random(1000)
    sequences = [[_step(label) for label in labels] for labels in HAND_WRITTEN.values()]
    sequences += [_random_steps(rng, 8) for _ in range(16)]
    groups = [(tg,), (torch,)] if tg is torch else [(tg, torch)]
    return [[transcript for libs in groups
             for transcript in _in_forked_child(lambda libs=libs, steps=steps: [_transcript(steps, lib)
                                                                                 for lib in libs])]
            for steps in sequences]


def test_sequences_from_a_new_process_match_torch():
    tests = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(map(str, (tests.parent / "src", tests, tests / "utils")))}
    script = f"import json, {Path(__file__).stem} as t; print(json.dumps(t.pristine_transcripts()))"
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    for ours, theirs in json.loads(done.stdout.splitlines()[-1]):
        _assert_same_outcomes(ours, theirs)
