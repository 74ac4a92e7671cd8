"""The PTX reader's graph algorithms (``verifier/ptx/graph.py``): Cooper, Harvey and Kennedy's
immediate dominators equal the textbook fixpoint over dominator sets on random control-flow graphs
(so the natural loops, an edge to a block that dominates its source, are the same), and the
worklist reachability equals sweeping every edge until nothing changes."""

from __future__ import annotations

import random

import numpy as np
from bankproof.verifier.ptx.graph import dominance_test, dominates, immediate_dominators, reach_fixpoint


def set_dominators(succ: list[set[int]], pred: list[set[int]]) -> list[set[int] | None]:
    """Every block's dominators by intersecting its predecessors' until nothing changes."""
    reach, todo = {0}, [0]
    while todo:
        for t in succ[todo.pop()]:
            if t not in reach:
                reach.add(t)
                todo.append(t)
    dom: list[set[int] | None] = [set(reach) if b in reach else None for b in range(len(succ))]
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for b in sorted(reach - {0}):
            ps = [dom[p] for p in pred[b] if dom[p] is not None]
            new = set.intersection(*ps) | {b} if ps else {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def random_graph(rng: random.Random) -> tuple[list[set[int]], list[set[int]]]:
    n = rng.randint(1, 40)
    succ = [set() for _ in range(n)]
    for b in range(n):
        if b + 1 < n and rng.random() < 0.7:
            succ[b].add(b + 1)  # fall-through
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            succ[b].add(rng.randrange(n))  # a branch, forward or back
    pred = [set() for _ in range(n)]
    for b, ss in enumerate(succ):
        for t in ss:
            pred[t].add(b)
    return succ, pred


def test_immediate_dominators_equal_the_set_fixpoint_on_random_graphs():
    rng = random.Random(7)
    back_edges = 0
    for _ in range(2000):
        succ, pred = random_graph(rng)
        idom, dom = immediate_dominators(succ, pred), set_dominators(succ, pred)
        for b in range(len(succ)):
            assert (idom[b] is None) == (dom[b] is None), (succ, b)
            if dom[b] is None:
                continue
            assert {a for a in range(len(succ)) if dominates(idom, a, b)} == dom[b], (succ, b)
            back_edges += sum(h in dom[b] for h in succ[b])
    assert back_edges > 1000


def test_the_interval_dominance_test_equals_the_set_fixpoint():
    """The natural loops' back-edge test (intervals of the dominator tree, built once) says what
    the dominator sets say, for every pair of blocks (a block the entry cannot reach dominated by
    none)."""
    rng = random.Random(11)
    for _ in range(1000):
        succ, pred = random_graph(rng)
        dom, sets = dominance_test(immediate_dominators(succ, pred)), set_dominators(succ, pred)
        for b in range(len(succ)):
            got = {a for a in range(len(succ)) if dom(a, b)}
            assert got == (sets[b] or set()), (succ, b)


def test_a_diamond_and_a_loop():
    #  0 -> 1 -> 3, 0 -> 2 -> 3, 3 -> 1 (a loop through 1 and 3 entered from 0 and 2)
    succ = [{1, 2}, {3}, {3}, {1}]
    pred = [set(), {0, 3}, {0}, {1, 2}]
    idom = immediate_dominators(succ, pred)
    assert idom == [0, 0, 0, 0]
    assert not dominates(idom, 1, 3)  # 3 is reached from 2 without passing 1: 3 -> 1 is no back edge


def sweep_fixpoint(edges, reach, cond):
    """Every edge of every block, in order, until a sweep changes nothing."""
    reach, cond = list(reach), list(cond)
    changed = True
    while changed:
        changed = False
        for b in range(len(edges)):
            for tb, c, unk in edges[b]:
                new = reach[b] if c is None else reach[b] & c
                merged = reach[tb] | new
                flag = cond[tb] or ((cond[b] or unk) and bool(new.any()))
                if not np.array_equal(merged, reach[tb]) or flag != cond[tb]:
                    reach[tb], cond[tb], changed = merged, flag, True
    return reach, cond


def test_worklist_reachability_equals_sweeping_every_edge():
    rng = random.Random(11)
    grew = 0
    for _ in range(1000):
        succ, _ = random_graph(rng)
        threads = rng.choice([1, 8, 64])
        edges = [
            [(t, rng.choice([None, np.array([rng.random() < 0.5 for _ in range(threads)])]), rng.random() < 0.1)
             for t in sorted(ss)]
            for ss in succ
        ]  # fmt: skip
        start = [np.zeros(threads, dtype=bool) for _ in succ]
        start[0][:] = True
        got, want = (
            reach_fixpoint(edges, start, [False] * len(succ)),
            sweep_fixpoint(edges, start, [False] * len(succ)),
        )
        assert [r.tolist() for r in got[0]] == [r.tolist() for r in want[0]] and got[1] == want[1]
        grew += sum(bool(r.any()) for r in got[0][1:])
    assert grew > 1000
