"""Find "× N" groups: repeated blocks along chains of a graph, found by run-length folding.

The graph is given as node names and successor lists (indices into the node list, in gradient direction).

1. Small dead-end subtrees that hang off one node (a leaf's ``AccumulateGrad``, ``TBackward0 ->
   AccumulateGrad`` of a weight) are attached to that node, so an MLP layer is one chain element. A sink
   shared by several nodes (a weight reused by every repeat) is left out of chains and groups.
2. Chains: a node with exactly one other successor, which has no other predecessor, is linked to it.
3. Each chain is a sequence of element signatures (name plus hanging names); for every period ``p`` the
   length of the run of ``sig[i] == sig[i + p]`` is computed once (right to left), then a greedy scan takes
   at each position the period covering most elements with at least two repeats.

Groups never drop nodes: they list their members; renderers show a collapsed group as one node.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MAX_PERIOD = 48  # longest repeating block looked for, in chain elements
MAX_HANGING = 4  # largest dead-end subtree attached to its parent
MIN_MEMBERS = 6  # a group must hide at least this many nodes to be worth a box


@dataclass
class Group:
    pattern: list[str]
    repeats: int
    members: list[int]  # node indices
    spine: list[int]  # chain element indices (one per element, in order)

    @property
    def label(self) -> str:
        return f"{' → '.join(self.pattern)} × {self.repeats}"


def find_groups(names: list[str], succ: list[list[int]]) -> list[Group]:
    n = len(names)
    n_pred = [0] * n
    for s in succ:
        for j in s:
            n_pred[j] += 1
    hang = _hanging_sizes(succ, n_pred)
    attached: list[list[int]] = [[] for _ in range(n)]  # hanging subtree roots per node
    nxt = [-1] * n
    linked = [False] * n
    for i in range(n):
        main = []
        for j in succ[i]:
            if hang[j] and n_pred[j] == 1:
                attached[i].append(j)
            elif not succ[j]:
                pass  # a shared sink (a weight used by every repeat): no part of a chain, nor of a group
            else:
                main.append(j)
        if not main and attached[i]:
            _promote_tail(attached[i], hang, main)
        if len(main) == 1 and n_pred[main[0]] == 1 and main[0] != i:
            nxt[i] = main[0]
            linked[main[0]] = True
    hanging = [False] * n
    for lst in attached:
        for j in lst:
            hanging[j] = True
    groups: list[Group] = []
    for head in range(n):
        if linked[head] or hanging[head]:
            continue
        chain = [head]
        while nxt[chain[-1]] >= 0 and len(chain) <= n:
            chain.append(nxt[chain[-1]])
        if len(chain) >= 2:
            groups.extend(_fold_chain(chain, names, succ, attached))
    return groups


def _promote_tail(attached: list[int], hang: list[int], main: list[int]) -> None:
    """A node whose inputs are all small dead ends may be the end of a chain whose tail is short enough to
    look like one: its clearly largest dead end (3 nodes or more) continues the chain instead."""
    sizes = sorted((hang[j] for j in attached), reverse=True)
    if sizes[0] >= 3 and (len(sizes) == 1 or sizes[1] < sizes[0]):
        j = next(j for j in attached if hang[j] == sizes[0])
        attached.remove(j)
        main.append(j)


def _hanging_sizes(succ: list[list[int]], n_pred: list[int]) -> list[int]:
    """Size of the dead-end subtree rooted at each node (0 when it is not one): every node below has one
    predecessor, and the subtree has at most MAX_HANGING nodes.

    Snapshots list nodes breadth first, so a node with one predecessor comes after it: one pass from the
    last node back sizes children before parents. Other orders take the general walk."""
    size = [0] * len(succ)
    for i in range(len(succ) - 1, -1, -1):
        total = 1
        for j in succ[i]:
            if n_pred[j] != 1:
                total = 0
                break
            if j < i:  # not sized yet: the order is not parents first
                return _hanging_sizes_any_order(succ, n_pred)
            if not size[j]:
                total = 0
                break
            total += size[j]
        if total <= MAX_HANGING:
            size[i] = total
    return size


def _hanging_sizes_any_order(succ: list[list[int]], n_pred: list[int]) -> list[int]:
    """:func:`_hanging_sizes` for nodes in any order: a depth-first walk that sizes children first."""
    n = len(succ)
    size = [-1] * n  # -1 unknown
    for start in range(n):
        if size[start] >= 0:
            continue
        stack = [(start, False)]
        while stack:
            i, done = stack.pop()
            if size[i] >= 0:
                continue
            if not done:
                stack.append((i, True))
                stack.extend((j, False) for j in succ[i] if size[j] < 0)
                continue
            total = 1
            for j in succ[i]:
                if n_pred[j] != 1 or size[j] <= 0:
                    total = 0
                    break
                total += size[j]
            size[i] = total if 0 < total <= MAX_HANGING else 0
    return size


def _subtree(i: int, succ: list[list[int]]) -> list[int]:
    out, stack = [], [i]
    while stack:
        k = stack.pop()
        out.append(k)
        stack.extend(reversed(succ[k]))
    return out


def _fold_chain(chain: list[int], names, succ, attached) -> list[Group]:
    sig_ids: dict = {}
    sigs = []
    for i in chain:
        key = (names[i], tuple(sorted(tuple(names[k] for k in _subtree(j, succ)) for j in attached[i])))
        sigs.append(sig_ids.setdefault(key, len(sig_ids)))
    best_p, best_cover = _best_periods(np.asarray(sigs, dtype=np.int64))
    groups = []
    i = 0
    n = len(chain)
    while i < n:
        p, cover = int(best_p[i]), int(best_cover[i])
        if not p:
            i += 1
            continue
        spine = chain[i:i + cover]
        members = []
        for k in spine:
            members.append(k)
            for j in attached[k]:
                members.extend(_subtree(j, succ))
        if len(members) >= MIN_MEMBERS:
            groups.append(Group([names[k] for k in chain[i:i + p]], cover // p, members, spine))
            i += cover
        else:
            i += 1
    return groups


def _best_periods(sigs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each position: the period whose repeats starting there cover most elements (0: none repeats
    twice), and that coverage. Ties go to the shorter period.

    All periods are handled at once, as rows of a (periods x positions) table: one pass of array operations
    instead of one per period."""
    n = len(sigs)
    max_p = min(MAX_PERIOD, n // 2)
    if max_p < 1:
        return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    periods = np.arange(1, max_p + 1)[:, None]
    positions = np.arange(n)
    partner = positions + periods  # the element compared with position i: i + p
    matches = (partner < n) & (sigs[np.minimum(partner, n - 1)] == sigs)
    # run[p, i]: how many consecutive j >= i have sigs[j] == sigs[j + p] (up to the next mismatch)
    mismatch_at = np.where(matches, n, positions)
    next_mismatch = np.minimum.accumulate(mismatch_at[:, ::-1], axis=1)[:, ::-1]
    run = next_mismatch - positions
    cover = np.where(run >= periods, periods * (1 + run // periods), 0)
    best = np.argmax(cover, axis=0)  # the first maximum: the shortest period
    best_cover = cover[best, positions]
    return np.where(best_cover > 0, best + 1, 0), best_cover
