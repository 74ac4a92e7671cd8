"""The §5.4 construction's view of a lane-group target: each ds_read/ds_write's lane-0 group and
group count, from the target's published rules (:mod:`bankproof.models.target`), for
:func:`bankproof.models.swizzle.optimal_swizzle`."""

from __future__ import annotations

from bankproof.models import lds
from bankproof.models.swizzle import LaneGroups
from bankproof.models.target import get, rule


def lane_groups(arch: str) -> LaneGroups | None:
    """The §5.4 construction's view of a lane-group target (None on a phase target): lane 0's
    group and the group count of the ds_read/ds_write moving ``vec_bytes`` per lane.

    >>> lane_groups("gfx942").group(16, "load"), lane_groups("gfx950").group(2, "store")
    (([1, 2, 20], 8), None)
    """
    t = get(arch)
    if t.model != "lane groups":
        return None

    def group(vec_bytes: int, kind: str) -> tuple[list[int], int] | None:
        instr = f"ds_{'read' if kind == 'load' else 'write'}_b{8 * vec_bytes}"
        if instr not in lds.INSTRS:
            return None
        r = rule(arch, instr)
        return None if r.groups is None else (lds.group_subspace(r), r.ngroups)

    return LaneGroups(t.warp, t.banks, group)
