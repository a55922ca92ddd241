"""tracegrad sets glibc's malloc up for large temporaries when it is imported (backend/host_allocator.py): an
operation whose temporaries outgrow glibc's default trim threshold stops faulting its pages in afresh on every
call. Each check runs in a fresh interpreter, since the settings belong to the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tracegrad.backend import host_allocator

on_glibc = pytest.mark.skipif(host_allocator.reason_left_alone({}) is not None, reason="glibc only")

# Three live 8 MiB temporaries per call, then all freed: their 24 MiB outgrow glibc's default trim threshold
# (twice the largest block freed so far), so by default each call maps ~6,000 pages in again.
_PROGRAM = """
import json, resource, sys
import numpy as np
if sys.argv[1] == "import":
    import tracegrad
    from tracegrad.backend import host_allocator
    tuned = host_allocator.tuned
else:
    tuned = None
x = np.ones((1024, 1024))
def step():
    a = x + 1.0
    b = a * 2.0
    c = b - x
    return float(c[0, 0])
for _ in range(3):
    step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(10):
    step()
print(json.dumps({"tuned": tuned, "faults_per_call": (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 10}))
"""


def _run(mode: str, **env) -> dict:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_") and k != "GLIBC_TUNABLES"}
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", _PROGRAM, mode], capture_output=True, text=True, env=environment,
                          check=True, timeout=120)
    return json.loads(done.stdout)


@on_glibc
def test_importing_tracegrad_stops_the_page_faults_of_large_temporaries():
    plain = _run("numpy only")
    tuned = _run("import")
    assert tuned["tuned"] is True
    assert plain["faults_per_call"] > 1000  # (the pattern this guards against: 3 x 2048 pages)
    assert tuned["faults_per_call"] < 50


@on_glibc
def test_the_user_can_turn_it_off():
    result = _run("import", TRACEGRAD_TUNE_MALLOC="0")
    assert result["tuned"] is False
    assert result["faults_per_call"] > 1000


@on_glibc
def test_the_users_own_malloc_settings_win():
    assert _run("import", MALLOC_ARENA_MAX="2")["tuned"] is False
    assert _run("import", GLIBC_TUNABLES="glibc.malloc.trim_threshold=1000000")["tuned"] is False


@pytest.mark.parametrize(("environ", "reason"), [
    ({"TRACEGRAD_TUNE_MALLOC": "0"}, "TRACEGRAD_TUNE_MALLOC=0"),
    ({"MALLOC_TRIM_THRESHOLD_": "1"}, "the user's own settings (MALLOC_TRIM_THRESHOLD_)"),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1"}, "the user's own settings (GLIBC_TUNABLES)"),
])
def test_reasons_to_leave_malloc_alone(environ, reason):
    assert host_allocator.reason_left_alone(environ) == reason


def test_other_tunables_do_not_count_as_malloc_settings():
    assert host_allocator.reason_left_alone({"GLIBC_TUNABLES": "glibc.cpu.hwcaps=-AVX512F"}) in (None, "not glibc")
