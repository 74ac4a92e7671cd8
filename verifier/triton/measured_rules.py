"""Rules from whole-kernel measurements that the per-instruction model does not cover, each with
the record that backs it.

- :func:`bound_narrow_ca`: a 4- or 8-byte ``cp.async.ca`` whose shared store conflicts, issued by a
  software pipeline (a prologue copy before the loop, the same buffer's copy inside it), measured
  above its store count in whole kernels by one prologue's worth of copies (H100
  ``h100-2026-11-23-triton-kernels.json`` matmul_fp32_128x64x64: +1024; H200
  ``h200-2026-11-26-real-kernels.json`` lib_matmul_fp32_tf32_64x64x32: +512), equal in two
  others; single-instruction probes (zero-fill ones included, ``h200-2026-11-26-cp-async-zfill.json``)
  cost exactly the store. Cause not identified, so the ledger gives the range [store, store +
  prologue copies] (above the copy's global lines where those may outnumber its store) and calls
  the kernel not complete.
- :func:`st_agrees`: shared stores that run while asynchronous copies (cp.async, or the bulk/TMA
  engine) write shared memory show extra ``op_st`` wavefronts that ncu also counts as ``op_st``
  bank conflicts, and that change run to run (``h200-2026-11-26-l1-contention.json``: conflict-free
  stores beside cp.async or bulk copies; none beside global loads, cached or not, or global stores).
  A measured st total agrees when its excess over the prediction equals ncu's st conflicts less
  the predicted ones.
- :data:`GUARDED_CG_NOTE`: a ``.cg`` copy under a guard that turns whole warps off (Triton's guard
  for a layout whose warps repeat elements): ncu's instrumented bypass counter reads such an
  instruction as 0 when ptxas guards it ``@P`` and as if every executing warp copied when ``@!P``
  (``h200-2026-11-26-dead-warps.json``; ``.ca`` copies count only the lanes on, so the model's
  count, the warps' live lanes only, is checked there). The ledger's count stays; the total
  carries ``ncu_range``, what that counter may read, and the comparison accepts it there.

>>> st_agrees(533, 5, predicted=528, predicted_ideal=528, async_copies=True)
True
>>> st_agrees(533, 5, predicted=528, predicted_ideal=528, async_copies=False)
False
"""

from __future__ import annotations

from bankproof.verifier.triton.ledger_records import LedgerReport

NARROW_CA_NOTE = (
    "a conflicted 4/8-byte cp.async.ca in a software pipeline: whole kernels measured up to one "
    "prologue's copies above the store count (cause not identified)"
)
GUARDED_CG_NOTE = (
    "guarded .cg copies: ncu's bypass counter reads a copy guarded @P as 0 and one guarded @!P as if "
    "every executing warp copied (h200-2026-11-26-dead-warps.json); ncu_range is what it may read"
)
ASYNC_ST_NOTE = (
    "shared stores beside asynchronous copies: the excess equals ncu's op_st bank conflicts "
    "(contention with the copies' writes, varies run to run; h200-2026-11-26-l1-contention.json)"
)


def bound_narrow_ca(entries: list[dict]) -> None:
    """Give a pipelined, conflicted narrow ``.ca`` copy's prologue entry ``wavefronts_max``: its
    own copies once more (see the module note)."""
    looped = {(e["location"], tuple(e.get("buffers", ()))) for e in entries if e.get("loops")}
    for e in entries:
        narrow = e.get("family") == "ldgsts" and e.get("cache") == ["ca"] and e.get("instr") in ("cp4", "cp8")
        conflicted = e.get("wavefronts") is not None and e["wavefronts"] > e.get("ideal", 0)
        if not narrow or e.get("loops") or not conflicted:
            continue
        if (e["location"], tuple(e.get("buffers", ()))) in looped:
            e["wavefronts_max"] = max(e["wavefronts"], e.get("wavefronts_max") or 0) + e["wavefronts"]
            e["lines_note"] = NARROW_CA_NOTE


def async_copies(ledger: LedgerReport) -> bool:
    """Whether a kernel's ledger holds asynchronous copies into shared memory (cp.async or TMA
    loads), the condition of :func:`st_agrees`."""
    return any(e.family == "ldgsts" or e.instr == "tma.load" for e in ledger.entries)


def st_agrees(
    measured: int, measured_conflicts: int | None, predicted: int, predicted_ideal: int, async_copies: bool
) -> bool:
    """Whether a measured ``op_st`` total agrees with the prediction: equal, or, in a kernel with
    asynchronous copies into shared memory, above it by exactly ncu's st bank conflicts less the
    predicted conflicts (``predicted - predicted_ideal``)."""
    if measured == predicted:
        return True
    if not async_copies or measured_conflicts is None:
        return False
    return measured - predicted == measured_conflicts - (predicted - predicted_ideal)


def guarded_cg_range(entries: list[dict], total: int) -> tuple[int, int] | None:
    """What ncu's counter may read (``ncu_range``, see :data:`GUARDED_CG_NOTE`) for an op class whose
    wavefronts are ``total``, where guarded ``.cg`` copies (draft ledger entries with ``ncu_reads``)
    make it read otherwise; ``None`` if none.

    >>> guarded_cg_range([{"ncu_reads": [0, 8], "wavefronts": 2, "executions": 3}], 100)
    (94, 118)
    """
    guarded = [e for e in entries if "ncu_reads" in e]
    if not guarded:
        return None
    lo, hi = (total + sum((e["ncu_reads"][k] - e["wavefronts"]) * e["executions"] for e in guarded)
              for k in (0, 1))  # fmt: skip
    return lo, hi
