"""The workloads, in the order they run and are reported (the deep chain last: it is the one most
likely to take an unfinished engine down)."""

from __future__ import annotations

from benchmarks.spec import Workload
from benchmarks.workloads.chain import CHAIN
from benchmarks.workloads.cnn import CNN
from benchmarks.workloads.deep import DEEP
from benchmarks.workloads.inplace_view import INPLACE_VIEW
from benchmarks.workloads.live import LIVE
from benchmarks.workloads.mlp import MLP_MEDIUM, MLP_TINY
from benchmarks.workloads.perop import OBSERVER, PEROP
from benchmarks.workloads.resample import RESAMPLE
from benchmarks.workloads.snapshot import SNAPSHOT

WORKLOADS: tuple[Workload, ...] = (
    PEROP,
    CHAIN,
    MLP_MEDIUM,
    MLP_TINY,
    CNN,
    OBSERVER,
    SNAPSHOT,
    LIVE,
    INPLACE_VIEW,
    RESAMPLE,
    DEEP,
)

__all__ = ["WORKLOADS"]
