"""Control-flow graph algorithms of the PTX reader, on blocks numbered from the entry (0):
immediate dominators (for the natural loops) and the per-thread reachability fixpoint.

>>> idom = immediate_dominators([{1}, {2}, {1}], [set(), {0, 2}, {1}])
>>> idom, dominates(idom, 1, 2)
([0, 0, 1], True)
"""

from __future__ import annotations

from collections import deque

import numpy as np

Edge = tuple[int, "np.ndarray | None", bool]  # (successor, threads taking it or all, on a run-time value)


def immediate_dominators(succ: list[set[int]], pred: list[set[int]]) -> list[int | None]:
    """Each block's immediate dominator (block 0, the entry, is its own; ``None`` for a block it
    cannot reach), by Cooper, Harvey and Kennedy's iteration over reverse postorder: near-linear
    where intersecting dominator sets is quadratic in the blocks.

    >>> immediate_dominators([{1, 2}, {3}, {3}, set(), set()], [set(), {0}, {0}, {1, 2}, set()])
    [0, 0, 0, 0, None]
    """
    nb = len(succ)
    order: list[int] = []  # postorder of the blocks reachable from the entry (iterative DFS)
    seen = [False] * nb
    if nb:
        seen[0] = True
        stack = [(0, iter(sorted(succ[0])))]
        while stack:
            b, it = stack[-1]
            t = next(it, None)
            if t is None:
                order.append(b)
                stack.pop()
            elif not seen[t]:
                seen[t] = True
                stack.append((t, iter(sorted(succ[t]))))
    rank = {b: i for i, b in enumerate(order)}  # postorder number: the entry's is the highest
    idom: list[int | None] = [None] * nb
    if nb:
        idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in reversed(order[:-1]):  # reverse postorder, the entry left out
            new = None
            for p in pred[b]:
                if idom[p] is None:
                    continue
                if new is None:
                    new = p
                    continue
                x, y = p, new
                while x != y:  # walk both up to their common dominator
                    while rank[x] < rank[y]:
                        x = idom[x]  # type: ignore[assignment]
                    while rank[y] < rank[x]:
                        y = idom[y]  # type: ignore[assignment]
                new = x
            if new is not None and idom[b] != new:
                idom[b], changed = new, True
    return idom


def dominates(idom: list[int | None], a: int, b: int) -> bool:
    """Whether block ``a`` dominates block ``b`` (``b`` reachable): ``a`` is on ``b``'s chain of
    immediate dominators."""
    while True:
        if b == a:
            return True
        up = idom[b]
        if up is None or up == b:
            return False
        b = up


def dominance_test(idom: list[int | None]):
    """``dominates(idom, a, b)`` for many pairs: each block's interval in a preorder walk of the
    dominator tree (``a`` dominates ``b`` when ``b``'s interval lies in ``a``'s), built once.

    >>> dom = dominance_test([0, 0, 1, None])
    >>> dom(1, 2), dom(2, 1), dom(0, 3)
    (True, False, False)
    """
    nb = len(idom)
    kids: list[list[int]] = [[] for _ in range(nb)]
    for b, up in enumerate(idom):
        if up is not None and up != b:
            kids[up].append(b)
    first, last = [-1] * nb, [-1] * nb
    clock, stack = 0, [(0, False)] if nb and idom[0] is not None else []
    while stack:
        b, done = stack.pop()
        if done:
            last[b] = clock
            continue
        first[b], clock = clock, clock + 1
        stack.append((b, True))
        stack.extend((c, False) for c in kids[b])

    def dominates_pair(a: int, b: int) -> bool:
        return first[b] >= 0 and first[a] <= first[b] and last[b] <= last[a]

    return dominates_pair


def reach_fixpoint(
    edges: list[list[Edge]], reach: list[np.ndarray], cond: list[bool]
) -> tuple[list[np.ndarray], list[bool]]:
    """The least fixpoint of the threads reaching each block (and whether a run-time value decides
    it) from the entry's: a worklist that revisits a block only when what reaches it grew (both
    only grow, so any order ends at the same fixpoint; back edges included).

    >>> every = np.ones(2, dtype=bool)
    >>> edges = [[(1, np.array([True, False]), False), (2, None, True)], [(0, None, False)], []]
    >>> r, c = reach_fixpoint(edges, [every, ~every, ~every], [False] * 3)
    >>> [x.tolist() for x in r], c
    ([[True, True], [True, False], [True, True]], [False, False, True])
    """
    reach, cond = list(reach), list(cond)
    todo = deque(b for b in range(len(edges)) if reach[b].any())
    queued = [False] * len(edges)
    for b in todo:
        queued[b] = True
    while todo:
        b = todo.popleft()
        queued[b] = False
        rb, cb = reach[b], cond[b]
        for tb, c, unk in edges[b]:
            new = rb if c is None else rb & c
            merged = reach[tb] | new
            flag = cond[tb] or ((cb or unk) and bool(new.any()))
            if flag != cond[tb] or not np.array_equal(merged, reach[tb]):
                reach[tb], cond[tb] = merged, flag
                if not queued[tb]:
                    queued[tb] = True
                    todo.append(tb)
    return reach, cond


__all__ = ["Edge", "dominates", "immediate_dominators", "reach_fixpoint"]
