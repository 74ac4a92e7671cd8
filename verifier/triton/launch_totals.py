"""A captured launch's totals over all its CTAs (``triton replay``): the ledger answers one CTA;
the launch is every CTA of its grid.

Sound two ways, else said not known: the ledger run again with the program ids left unknown
(and so without the buffers, which need a whole launch) is complete and equal to CTA 0's, so no
count depends on which CTA runs or what it loads: the launch is CTA 0's totals times the CTAs. Else, up to
:data:`MAX_CTAS` CTAs, each CTA's ledger is run with its own program ids and the buffers, and
summed, within :data:`BUDGET_S` seconds.

>>> from bankproof.verifier.triton.ledger_records import ClassTotal
>>> scaled({"ld": ClassTotal(8, 2, ideal=4)}, 3)["ld"].to_dict()
{'wavefronts': 24, 'instructions': 6, 'ideal': 12}
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Mapping

from bankproof.verifier.kernel.buffers import Buffer
from bankproof.verifier.results import FrozenMap
from bankproof.verifier.triton import ledger
from bankproof.verifier.triton.ledger_records import ClassTotal, LaunchTotals, LedgerReport

MAX_CTAS = 64
BUDGET_S = 60.0  # the most one launch's CTAs are run for, one by one
PIDS = ("program_id_x", "program_id_y", "program_id_z")
ALIKE = "every CTA alike (the ledger with the program ids unknown is complete and equal)"
EACH = "each CTA's ledger run with its program ids"


def scaled(totals: Mapping[str, ClassTotal], n: int) -> dict[str, ClassTotal]:
    """Totals times ``n`` (wavefronts, instructions and ideal)."""
    return {
        k: ClassTotal(t.wavefronts * n, t.instructions * n, ideal=None if t.ideal is None else t.ideal * n)
        for k, t in totals.items()
        if t.wavefronts is not None and t.instructions is not None
    }


def _plain(totals: Mapping[str, ClassTotal]) -> dict[str, tuple]:
    return {k: (t.wavefronts, t.instructions, t.ideal) for k, t in totals.items()}


def launch_totals(
    report,
    source,
    grid: tuple[int, int, int],
    args: Mapping[str, int],
    buffers: Mapping[str, Buffer] | None,
    cta0: LedgerReport,
) -> LaunchTotals:
    """The launch's totals (see the module docstring); ``cta0`` is CTA 0's ledger, ``report`` the
    scan the ledgers attribute to."""
    n = math.prod(grid)
    if cta0.incomplete or cta0.totals is None:
        return LaunchTotals(n, why="CTA 0's totals are not complete")
    if not cta0.totals and not cta0.entries:
        return LaunchTotals(n, {}, how="no shared-memory instructions")
    if n == 1:
        return LaunchTotals(n, scaled(cta0.totals, 1), how="one CTA")
    free = FrozenMap({k: v for k, v in args.items() if k not in PIDS})
    # without the buffers too (they need a whole launch): complete then, the data decides nothing
    any_cta, _ = _cta(report, source, free, None)
    if (
        any_cta is not None
        and not any_cta.incomplete
        and any_cta.totals
        and _plain(any_cta.totals) == _plain(cta0.totals)
    ):
        return LaunchTotals(n, scaled(cta0.totals, n), how=ALIKE)
    if n > MAX_CTAS:
        return LaunchTotals(
            n,
            why=f"the CTAs' totals may differ (they need the program id) and the grid has {n} CTAs, "
            f"more than the {MAX_CTAS} the replay runs one by one",
        )
    sums: dict[str, list[int | None]] = {}
    start = time.monotonic()
    for z, y, x in itertools.product(range(grid[2]), range(grid[1]), range(grid[0])):
        if time.monotonic() - start > BUDGET_S:
            return LaunchTotals(n, why=f"the CTAs were not all run within {BUDGET_S:.0f} s")
        at = FrozenMap({**args, "program_id_x": x, "program_id_y": y, "program_id_z": z})
        led, error = (cta0, "") if (x, y, z) == (0, 0, 0) else _cta(report, source, at, buffers)
        if led is None or led.incomplete or led.totals is None:
            why = error or (led.incomplete[0] if led is not None and led.incomplete else "no totals")
            return LaunchTotals(n, why=f"CTA ({x}, {y}, {z})'s totals are not complete: {why}")
        for k, t in led.totals.items():
            acc = sums.setdefault(k, [0, 0, 0])
            acc[0] += t.wavefronts or 0
            acc[1] += t.instructions or 0
            acc[2] = None if acc[2] is None or t.ideal is None else acc[2] + t.ideal
    totals = {k: ClassTotal(w, i, ideal=d) for k, (w, i, d) in sums.items()}
    return LaunchTotals(n, totals, how=EACH)


def _cta(report, source, args, buffers) -> tuple[LedgerReport | None, str]:
    """One CTA's ledger, or why there is none (its data is refused: a load past a buffer's end)."""
    try:
        return ledger.build(report, source.ttgir, source.ptx, args, source=source, buffers=buffers), ""
    except (ValueError, KeyError, IndexError) as e:  # InputError is a ValueError
        return None, str(e)[:300]


__all__ = ["MAX_CTAS", "launch_totals", "scaled"]
