"""Saving and restoring the whole float32 precision state of a library (torch's or tracegrad's), which is
process-wide: tests that change it put it back, as other tests read it.

The state is the tree of (backend, op) precisions, each a node's own value ("none": its parent's; None: cuDNN's
convolution or RNN node never set, which reads as tf32 where its parents say "none"), plus the two values the
legacy API keeps beside it (the matmul precision and cuDNN's allow_tf32 flag). torch reads out only resolved
values, and its legacy reads refuse to answer in a mixed state, so the own values are found by probing: a node
whose reading follows its parent's between two values has none of its own.

No API unsets a node: one saved unset is restored as tf32, which reads the same while its parents say "none"
(and both libraries are restored alike).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

TOPS = [("cuda", "all"), ("mkldnn", "all")]
LEAVES = [(backend, op) for backend in ("cuda", "mkldnn") for op in ("matmul", "conv", "rnn")]
NODES = [("generic", "all"), *TOPS, *LEAVES]

# torch's state in a new process, as far as it can be restored: (legacy matmul precision, cuDNN's allow_tf32,
# {node: own precision}) (cuDNN's nodes, unset there, read as this tf32 until a parent is set)
FRESH = ("highest", True, {**dict.fromkeys(NODES, "none"), ("cuda", "conv"): "tf32", ("cuda", "rnn"): "tf32"})


def _read(lib, node: tuple[str, str]) -> str:
    return lib._C._get_fp32_precision_getter(*node)


def _write(lib, node: tuple[str, str], value: str) -> None:
    lib._C._set_fp32_precision_setter(*node, value)


def _own_value(lib, node: tuple[str, str], parent: tuple[str, str], parents_own: str) -> str:
    """``node``'s own precision: "none" where its reading follows its parent's, else what it reads."""
    readings = set()
    for probe in ("ieee", "tf32"):
        _write(lib, parent, probe)
        readings.add(_read(lib, node))
    _write(lib, parent, parents_own)
    return "none" if len(readings) == 2 else readings.pop()


def _unset(lib, leaf: tuple[str, str], own: dict) -> bool:
    """Whether a cuDNN node that follows its parents was never set: it reads tf32 where they all say "none"."""
    parents = [(leaf[0], "all"), ("generic", "all")]
    for parent in parents:
        _write(lib, parent, "none")
    unset = _read(lib, leaf) == "tf32"
    for parent in parents:
        _write(lib, parent, own[parent])
    return unset


def _own_values(lib) -> dict[tuple[str, str], str | None]:
    own = {("generic", "all"): _read(lib, ("generic", "all"))}  # (the root reads as its own value)
    for top in TOPS:
        own[top] = _own_value(lib, top, ("generic", "all"), own["generic", "all"])
    for leaf in LEAVES:
        parent = (leaf[0], "all")
        own[leaf] = _own_value(lib, leaf, parent, own[parent])
        if own[leaf] == "none" and _unset(lib, leaf, own):
            own[leaf] = None
    return own


def _legacy_values(lib, own: dict) -> tuple[str, bool]:
    """The legacy values, read where the tree agrees with any of them (the nodes they check set for a moment)."""
    matmul_nodes, cudnn_nodes = [("cuda", "matmul"), ("mkldnn", "matmul")], [("cuda", "conv"), ("cuda", "rnn")]
    for node in matmul_nodes:
        _write(lib, node, "ieee")
    matmul = lib.get_float32_matmul_precision()
    if None in (own[node] for node in cudnn_nodes):
        cudnn = True  # (a cuDNN node is set by any write of the flag: one unset has never seen it changed)
    else:
        for node in cudnn_nodes:
            _write(lib, node, "tf32")
        try:
            cudnn = lib.backends.cudnn.allow_tf32  # (True, or refused: tf32 nodes disagree with a False flag)
        except RuntimeError:
            cudnn = False
    for node in matmul_nodes + cudnn_nodes:
        if own[node] is not None:
            _write(lib, node, own[node])
    return matmul, cudnn


def saved_state(lib) -> tuple:
    own = _own_values(lib)
    return (*_legacy_values(lib, own), own)


def restore_state(lib, state: tuple) -> None:
    """Put back a state of ``saved_state`` (or ``FRESH``): the legacy setters first, as they write nodes too.
    Nothing is written where nothing changed (so unset nodes stay unset)."""
    if saved_state(lib) == state:
        return
    matmul, cudnn, own = state
    lib.set_float32_matmul_precision(matmul)
    lib.backends.cudnn.allow_tf32 = cudnn
    for node, value in own.items():
        _write(lib, node, "tf32" if value is None else value)


@contextlib.contextmanager
def precisions_kept(*libs) -> Iterator[None]:
    """Run the block, then restore each library's float32 precision state as it was."""
    saved = [saved_state(lib) for lib in libs]
    try:
        yield
    finally:
        for lib, state in zip(libs, saved):
            restore_state(lib, state)
