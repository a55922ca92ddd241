import time

import tracegrad as torch
from tracegrad import viz
from tracegrad.viz.collapse import find_groups

CYCLE = ("sin", "cos", "exp", "tanh", "sigmoid", "neg", "abs")


def _cycle_chain(n_ops):
    x = torch.randn(3, requires_grad=True)
    h = x
    for i in range(n_ops):
        h = getattr(h, CYCLE[i % 7])()
    return h


def test_chain_of_a_repeated_cycle_is_one_group():
    msg = viz.graph_snapshot(_cycle_chain(300))
    (group,) = msg["groups"]
    assert group["repeats"] == 42 and len(group["pattern"]) == 7
    assert len(group["members"]) == 294 and group["collapsed"]
    assert group["label"].endswith("× 42")
    assert len(msg["nodes"]) == 301  # nothing dropped
    members = set(group["members"])
    assert {n["id"] for n in msg["nodes"] if n["group"] == group["id"]} == members
    # the expansion data: one repeat's names, in chain order
    by_id = {n["id"]: n for n in msg["nodes"]}
    names = [by_id[m]["name"] for m in group["members"]]
    assert names == group["pattern"] * 42


def test_collapse_off_gives_no_groups():
    msg = viz.graph_snapshot(_cycle_chain(50), collapse=False)
    assert msg["groups"] == [] and all(n["group"] is None for n in msg["nodes"])


def test_repeated_mlp_blocks_fold_with_their_weights():
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(4, 4), torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers)
    loss = model(torch.randn(2, 4)).sum()
    msg = viz.graph_snapshot(loss)
    assert len(msg["groups"]) == 1
    (group,) = msg["groups"]
    by_id = {n["id"]: n for n in msg["nodes"]}
    member_names = [by_id[m]["name"] for m in group["members"]]
    # each repeat: tanh, addmm, and the addmm's weight (TBackward0 -> AccumulateGrad) and bias
    assert group["pattern"] == ["TanhBackward0", "AddmmBackward0"]
    assert member_names.count("TBackward0") == group["repeats"] >= 7
    assert member_names.count("torch::autograd::AccumulateGrad") == 2 * group["repeats"]
    viz.validate(msg)


def test_shared_weights_stay_outside_groups():
    x = torch.randn(4, requires_grad=True)
    w = torch.randn(4, requires_grad=True)
    h = x
    for _ in range(30):
        h = (h * w).sin()
    msg = viz.graph_snapshot(h)
    (group,) = msg["groups"]
    w_node = viz.node_id(torch.autograd.graph.get_gradient_edge(w).node)
    assert w_node not in group["members"] and group["repeats"] >= 29


def test_no_groups_without_repeats():
    names = ["A", "B", "C", "D", "E", "F", "G", "H"]
    succ = [[i + 1] for i in range(7)] + [[]]
    assert find_groups(names, succ) == []


def test_branching_graph_is_not_folded_across_branches():
    names = ["Add", "A", "B", "A", "B"]
    succ = [[1, 3], [2], [], [4], []]
    assert find_groups(names, succ) == []


def test_5000_node_snapshot_is_fast():
    x = torch.randn(8, requires_grad=True)
    ws = [torch.randn(8, requires_grad=True) for _ in range(10)]
    h = x
    for i in range(2500):
        h = (h * ws[i % 10]).sin()
    viz.graph_snapshot(h)  # warm up
    best = float("inf")
    for _ in range(3):
        t = time.perf_counter()
        msg = viz.graph_snapshot(h)
        best = min(best, time.perf_counter() - t)
    assert len(msg["nodes"]) >= 5000 and sum(1 for n in msg["nodes"] if n["saved"]) >= 4999
    assert best < 1.0  # the benchmark (benchmarks/workloads/snapshot.py) holds the precise 200 ms target


def _best_periods_by_hand(sigs: list[int], max_period: int) -> tuple[list[int], list[int]]:
    """The definition, position by position: the period whose repeats from i cover most elements."""
    n = len(sigs)
    best_p, best_cover = [0] * n, [0] * n
    for i in range(n):
        for p in range(1, min(max_period, n // 2) + 1):
            run = 0
            while i + run + p < n and sigs[i + run] == sigs[i + run + p]:
                run += 1
            cover = p * (1 + run // p)
            if run >= p and cover > best_cover[i]:
                best_p[i], best_cover[i] = p, cover
    return best_p, best_cover


def test_best_periods_match_their_definition():
    import numpy as np

    from tracegrad.viz.collapse import MAX_PERIOD, _best_periods

    rng = np.random.default_rng(0)
    cases = [[], [1], [1, 1], [0, 1] * 30, [0, 1, 2] * 7 + [3] + [0, 1] * 5]
    cases += [list(rng.integers(0, k, size=int(rng.integers(2, 90)))) for k in (1, 2, 3) for _ in range(30)]
    for sigs in cases:
        best_p, best_cover = _best_periods(np.asarray(sigs, dtype=np.int64))
        assert (list(best_p), list(best_cover)) == _best_periods_by_hand(sigs, MAX_PERIOD), sigs


def test_hanging_sizes_do_not_depend_on_the_node_order():
    """The one-pass sizing (children listed after their parent, as in snapshots) and the general walk agree."""
    import random

    from tracegrad.viz.collapse import _hanging_sizes, _hanging_sizes_any_order

    rng = random.Random(0)
    for _ in range(300):
        n = rng.randint(1, 30)
        succ = [sorted({rng.randrange(i + 1, n) for _ in range(rng.choice([0, 1, 1, 2, 3])) if i + 1 < n})
                for i in range(n)]
        perm = list(range(n))
        rng.shuffle(perm)
        shuffled: list[list[int]] = [[] for _ in range(n)]
        for i in range(n):
            shuffled[perm[i]] = [perm[j] for j in succ[i]]
        for graph in (succ, shuffled):
            n_pred = [0] * n
            for children in graph:
                for j in children:
                    n_pred[j] += 1
            assert _hanging_sizes(graph, n_pred) == _hanging_sizes_any_order(graph, n_pred)
        sizes = _hanging_sizes(succ, [sum(j in s for s in succ) for j in range(n)])
        shuffled_sizes = _hanging_sizes(shuffled, [sum(k in s for s in shuffled) for k in range(n)])
        assert sizes == [shuffled_sizes[perm[i]] for i in range(n)]
