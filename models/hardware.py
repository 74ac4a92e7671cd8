"""The phase model of shared memory: instruction kinds and wavefronts. 32 banks of 4 bytes; a
warp instruction's lanes are served in wavefronts; the model turns per-lane byte addresses into
wavefronts. Rules are pinned by the GPU measurements in ``gpu_checks/results/`` (see
:func:`phase_ids`); which archs follow it, and how far each is measured, is
:mod:`bankproof.models.target`'s.

>>> bank(36 * 4), BANKS, BANK_BYTES
(4, 32, 4)
>>> instruction("LDS.128").name, instruction("ldsm.x4.trans").name
('ld.shared.v4.b32', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16')
"""

from dataclasses import dataclass

import numpy as np
from bankproof.models.errors import InputError
from bankproof.models.instructions import BANK_BYTES, BANKS, LANES, Instr, all_instructions, instruction

__all__ = [
    "BANKS", "BANK_BYTES", "COPY_NOTE", "LANES", "LINE_BYTES", "Instr", "Wavefronts", "all_instructions",
    "bank", "bank_field", "conflict_pair", "evaluate", "instruction", "ldst_phases",
    "one_instruction", "paired", "phase_ids", "vector_limit", "wavefront_counts",
]  # fmt: skip


def bank(byte_addr: int | np.ndarray) -> int | np.ndarray:
    """Bank serving a byte address: ``(addr // 4) % 32``."""
    return (byte_addr // BANK_BYTES) % BANKS


# ----- the wavefront model ---------------------------------------------------------------------
COPY_NOTE = (
    "cp.async.cg (LDGSTS.BYPASS) is counted as st.shared.v4 of the same addresses: equal in every "
    "whole-layout run recorded (gpu_checks/results/h100-2026-11-23-cute-examples.json), not yet "
    "measured with conflicts (assumed); timed on an H100 it also slows when one instruction's copies "
    "span more than one 512-byte block of shared memory (1.3-1.4x at two blocks, about 8x at four: "
    "...-cp-async-spread-times.json)"
)


@dataclass(frozen=True)
class Wavefronts:
    """What one warp instruction costs: ``count`` wavefronts (``ideal`` at best), the lanes of
    each ``phase`` (lanes in different phases never share a wavefront), and ``groups``: the lanes
    served by each wavefront (a lane appears once per wavefront that serves one of its words).
    ``status`` is ``measured`` (rules pinned by recorded measurements on this arch), ``assumed``
    (the measured rules, not yet measured on this arch) or ``unknown`` (with ``reason``)."""

    count: int
    ideal: int
    phases: tuple[tuple[int, ...], ...]
    groups: tuple[tuple[int, ...], ...]
    status: str = "measured"
    reason: str = ""


def _check_addresses(ins: Instr, offsets: np.ndarray, active: np.ndarray) -> None:
    if offsets.shape[-1] != LANES:
        raise InputError("wavefronts", "byte_offsets", f"must have {LANES} entries", offsets.shape[-1])
    if active.shape[-1] != LANES:
        raise InputError("wavefronts", "active", f"must have {LANES} entries", active.shape[-1])
    if (offsets < 0).any():
        raise InputError("wavefronts", "byte_offsets", "must be non-negative", int(offsets.min()))
    align = 16 if ins.is_matrix else ins.width
    lanes = slice(0, ins.address_lanes)
    bad = (offsets[..., lanes] % align != 0) & (active[..., lanes] if not ins.is_matrix else True)
    if bad.any():
        idx = np.argwhere(bad)[0]
        raise InputError(
            "wavefronts",
            "byte_offsets",
            f"must be {align}-byte aligned for {ins.name} (lane {int(idx[-1])})",
            int(offsets[tuple(idx)]),
        )
    if ins.is_matrix and not active.all():
        raise InputError("wavefronts", "active", f"must be all lanes for {ins.name} (.sync.aligned)")


def paired(offsets: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Whether each warp's active addresses are invariant under lane ^ 1, or under lane ^ 2
    (lanes whose partner is inactive are free). Shape ``(..., 32) -> (...)``."""
    lanes = np.arange(LANES)
    if active.all():  # every partner active (an access's instructions): equal addresses decide
        by1, by2 = offsets == offsets[..., lanes ^ 1], offsets == offsets[..., lanes ^ 2]
        return by1.all(axis=-1) | by2.all(axis=-1)
    out = np.zeros(offsets.shape[:-1], dtype=bool)
    for x in (1, 2):
        partner = lanes ^ x
        both = active & active[..., partner]
        out |= ~(both & (offsets != offsets[..., partner])).any(axis=-1)
    return out


def ldst_phases(request_bytes: int, kind: str, lanes) -> int:
    """Phases of an ld/st warp instruction moving ``request_bytes`` per lane whose lane bases
    (as tensor vectors or offsets, 0 = broadcast) are ``lanes``: :func:`phase_ids`'s rule for
    linear layouts (loads whose lane 0 or 1 repeats an address use phases twice as wide).

    >>> ldst_phases(16, "store", [1, 0, 4, 8, 16]), ldst_phases(16, "load", [1, 0, 4, 8, 16])
    (4, 2)
    """
    phases = max(1, request_bytes // BANK_BYTES)
    if kind == "load" and phases > 1 and (lanes[0] == 0 or lanes[1] == 0):
        phases //= 2
    return phases


def vector_limit(elem_bits: int) -> int:
    """log2 of the most elements one lane moves in an ld/st (128 bits per lane).

    >>> vector_limit(16), vector_limit(64)
    (3, 1)
    """
    return max(0, (128 // elem_bits).bit_length() - 1)


def bank_field(vector_bits: int, elem_bits: int) -> tuple[int, int]:
    """(lo, hi): the element-offset bits that pick a lane's bank group when each lane moves
    2^vector_bits elements; offsets below ``lo`` stay in one word (the lane's own vector, or the
    bytes of one 4-byte word), from ``hi`` up they wrap around the 128 bytes of banks.

    >>> bank_field(3, 16), bank_field(0, 8)
    ((3, 6), (2, 7))
    """
    request = (1 << vector_bits) * elem_bits // 8
    lo = vector_bits if request >= BANK_BYTES else (BANK_BYTES * 8 // elem_bits).bit_length() - 1
    return lo, (BANKS * BANK_BYTES * 8 // elem_bits).bit_length() - 1


def phase_ids(ins: Instr, offsets: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Phase of every lane, shape ``(..., 32)``.

    Measured on sm90 (H200, ncu 2025.3.1; files ``a`` = ``gpu_checks/results/h200-2026-11-22.json``,
    ``b`` = ``...-b.json``, cited as file:id). Every recorded measurement replays exactly
    (``tests/test_hardware_replay.py``):

    - ``ld``/``st`` of 1, 2 or 4 bytes: one phase of 32 lanes (a:202 32 words in one bank: 32;
      b:0 32 bytes in 8 words: 1).
    - ``st`` of 8 / 16 bytes: 2 / 4 phases of 16 / 8 consecutive lanes, whatever the addresses
      (a:801 st64 one address: 2; a:901, b:1171 st128 one address: 4; b:1210 pairs: 16).
    - ``ld`` of 8 / 16 bytes: the same, unless every active lane's address equals that of lane
      ^ 1 (or every one that of lane ^ 2; partners that are inactive do not count), see
      :func:`paired`; then phases are twice as wide: one of 32 lanes / two of 16 (a:301 ld64 one
      address: 1; a:401, b:521 ld128 one address: 2; b:578 ld128 pairs with half the lanes
      masked). Decisive cases (where merging changes the count): lane ^ 1 merged in 50 of 50,
      lane ^ 2 in 58 of 58; pairing only by lane ^ 3, ^ 4, ^ 8 or ^ 16 never merged (b:437,
      a:323, a:319, a:315 and 7 + 37 + 48 + 53 such cases). The merged 128-bit phases are lanes
      0-15 and 16-31 (b:574 quarters 0 and 1 collide: 4; b:575 quarters 0 and 2: 4).
    - ``ldmatrix``/``stmatrix`` ``.xN``: N phases, lanes 8k..8k+7 address matrix k (a:1617
      x4 with every matrix on the same 8 rows: 32).
    - Within a phase, equal 4-byte words are served once (broadcast), and a wavefront serves at
      most one word per bank.
    """
    lanes = np.arange(LANES)
    if ins.is_matrix:
        return np.broadcast_to(lanes // 8, offsets.shape).copy()
    n = ins.data_words  # width * 32 lanes / 128 bytes a wavefront
    if ins.op == "ld" and n > 1:
        wide = np.where(paired(offsets, active), n // 2, n)
        return lanes // (LANES // wide[..., None])
    return np.broadcast_to(lanes // (LANES // n), offsets.shape).copy()


def wavefront_counts(ins: Instr, offsets: np.ndarray, active: np.ndarray | None = None) -> np.ndarray:
    """Wavefronts of a batch of warp instructions: ``offsets`` and ``active`` of shape
    ``(N, 32)`` -> counts of shape ``(N,)``. Within a phase, a wavefront serves at most one
    4-byte word per bank (lanes reading one word share it), so a phase costs the largest number
    of distinct words any bank is asked for."""
    return evaluate(ins, offsets, active)[0]


def evaluate(
    ins: Instr,
    offsets: np.ndarray,
    active: np.ndarray | None = None,
    groups: bool = False,
    check: bool = True,
) -> tuple[np.ndarray, np.ndarray, list[list[list[int]]]]:
    """Batch model: ``(counts, ideals, groups)`` for ``(N, 32)`` offsets and active masks.

    ``ideals`` are the wavefronts the same active lanes take without bank conflicts: one per
    non-empty phase (no phase asks for more than 32 words). With ``groups``, the lanes of each
    wavefront: in each phase, wavefront r serves the r-th smallest distinct word of every bank
    (a lane wider than 4 bytes can appear in several)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    if offsets.ndim == 1:
        offsets = offsets[None]
    n = offsets.shape[0]
    act = np.ones(offsets.shape, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if act.shape != offsets.shape:
        act = np.broadcast_to(act, offsets.shape)
    if check:  # off only for addresses built aligned (an access's, from its bases)
        _check_addresses(ins, offsets, act)
    if not groups and n and not ins.is_matrix and ins.width <= BANK_BYTES and act.all():
        words = offsets >> 2  # one phase of 32 lanes, one word each (BANK_BYTES = 4)
        if int(words.max()) < 1 << 31:
            return one_phase_counts(words.astype(np.int32))
    if ins.is_matrix:
        act = act & (np.arange(LANES) < ins.address_lanes)
    phase = phase_ids(ins, offsets, act)
    words = (offsets[..., None] >> 2) + np.arange(ins.lane_words)  # (N, 32, k); BANK_BYTES = 4
    if not groups and n and int(offsets.max()) < 1 << 41:  # words below 2^40
        return _counts_by_row(words, phase[..., None], act, ins.data_words)  # at most a phase a data word
    sel = np.broadcast_to(act[..., None], words.shape)
    c = np.broadcast_to(np.arange(n)[:, None, None], words.shape)[sel]
    lane = np.broadcast_to(np.arange(LANES)[None, :, None], words.shape)[sel]
    p = np.broadcast_to(phase[..., None], words.shape)[sel]
    w = words[sel]
    # Distinct (case, phase, bank, word); then distinct words per (case, phase, bank).
    key = ((c * LANES + p) * BANKS + (w % BANKS)) * (1 << 32) + w
    uniq, inverse = np.unique(key, return_inverse=True)
    cpb, first, per_bank = np.unique(uniq >> 32, return_index=True, return_counts=True)
    worst = np.zeros(n * LANES, dtype=np.int64)
    np.maximum.at(worst, cpb // BANKS, per_bank)
    worst = worst.reshape(n, LANES)
    counts = worst.sum(axis=1)
    ideals = (worst > 0).sum(axis=1)
    if not groups:
        return counts, ideals, []
    seg = np.repeat(np.arange(len(cpb)), per_bank)
    rank_u = np.arange(len(uniq)) - first[seg]
    start = np.cumsum(worst, axis=1) - worst  # first wavefront of each phase
    wf = start[c, p] + rank_u[inverse.reshape(-1)]
    order = np.lexsort((lane, wf, c))
    cs, wfs, ls = c[order], wf[order], lane[order]
    keep = np.ones(len(cs), dtype=bool)
    keep[1:] = (cs[1:] != cs[:-1]) | (wfs[1:] != wfs[:-1]) | (ls[1:] != ls[:-1])
    cs, wfs, ls = cs[keep], wfs[keep], ls[keep]
    # Slice the sorted lanes at every (case, wavefront) change, then group wavefronts by case.
    new_group = np.ones(len(cs), dtype=bool)
    new_group[1:] = (cs[1:] != cs[:-1]) | (wfs[1:] != wfs[:-1])
    starts = np.flatnonzero(new_group).tolist() + [len(cs)]
    lanes_list = ls.tolist()
    flat = [lanes_list[a:b] for a, b in zip(starts[:-1], starts[1:])]
    bounds = np.concatenate([[0], np.cumsum(counts)]).tolist()
    out = [flat[bounds[i] : bounds[i + 1]] for i in range(n)]
    return counts, ideals, out


def one_phase_counts(words: np.ndarray) -> tuple:
    """:func:`evaluate` of rows of 32 active lanes that are one phase (``ld``/``st`` of at most 4
    bytes), given as each lane's 4-byte word (int32, ``(N, 32)``, sorted in place): each row's
    distinct words counted per bank (one bincount), the fullest bank's count; the ideal is 1.

    >>> one_phase_counts(np.array([[0] * 16 + [32] * 16], dtype=np.int32))[0].tolist()
    [2]
    """
    n = words.shape[0]
    words.sort(axis=1)
    new = np.empty(words.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(words[:, 1:], words[:, :-1], out=new[:, 1:])
    slot = _row_slots(n) | (words & (BANKS - 1))  # int64: bincount's own type
    worst = np.bincount(slot[new], minlength=n * BANKS).reshape(n, BANKS).max(axis=1)
    return worst, np.ones(n, dtype=np.int64), []


_ROW_SLOTS = np.arange(1 << 14, dtype=np.int64)[:, None] << 5  # row r's first bank slot, 32 r
_ROW_SLOTS.setflags(write=False)


def _row_slots(n: int) -> np.ndarray:
    return _ROW_SLOTS[:n] if n <= len(_ROW_SLOTS) else np.arange(n, dtype=np.int64)[:, None] << 5


def _counts_by_row(words: np.ndarray, phase: np.ndarray, act: np.ndarray, phases: int) -> tuple:
    """``evaluate`` without the groups: each row's (phase, word) pairs sorted in place, distinct
    ones counted per (phase, bank) with one bincount (no sort across rows); ``phases`` bounds the
    phase ids (a phase no lane is in costs nothing)."""
    n = words.shape[0]
    key = (phase << 40) | words  # int64 (phases and words are); phase broadcasts over a lane's words
    if not act.all():
        key = np.where(np.broadcast_to(act[..., None], words.shape), key, -1)
    key = key.reshape(n, -1)
    key.sort(axis=1)
    new = key >= 0
    new[:, 1:] &= key[:, 1:] != key[:, :-1]
    # slot (row, phase, bank): the row's first slot, the phase's 32 banks, the word's bank
    first = np.arange(0, n * phases * BANKS, phases * BANKS)[:, None]
    slot = (first + ((key >> 40) << 5)) | (key & (BANKS - 1))  # BANKS = 32 = 1 << 5
    per_bank = np.bincount(slot[new], minlength=n * phases * BANKS).reshape(n, phases, BANKS)
    worst = per_bank.max(axis=2)
    return worst.sum(axis=1), (worst > 0).sum(axis=1), []


def one_instruction(ins: Instr, byte_offsets, active=None) -> Wavefronts:
    """Wavefronts of one warp instruction, with its phases and wavefront groups (the archs and
    how far each is measured: :func:`bankproof.models.target_single.wavefronts`).

    >>> one_instruction(instruction("ld32"), [i * 128 for i in range(32)]).count
    32
    """
    offs = np.asarray(byte_offsets, dtype=np.int64)
    act = np.ones(LANES, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    if offs.shape != (LANES,) or act.shape != (LANES,):
        raise InputError("wavefronts", "byte_offsets/active", f"must have {LANES} entries each")
    counts, ideals, groups = evaluate(ins, offs[None], act[None], groups=True)
    if ins.is_matrix:
        act = act & (np.arange(LANES) < ins.address_lanes)
    phase = phase_ids(ins, offs[None], act[None])[0]
    phases = tuple(
        tuple(int(x) for x in np.flatnonzero(act & (phase == q)))
        for q in sorted({int(v) for v in phase[act]})
    )
    return Wavefronts(int(counts[0]), int(ideals[0]), phases, tuple(tuple(g) for g in groups[0]))


def conflict_pair(ins: Instr, offs: np.ndarray) -> dict:
    """Two lanes of one phase of an instruction (per-lane byte addresses ``offs``) that hit one
    bank at different words: the lowest such lanes, with the bank and the phase.

    >>> conflict_pair(instruction("ld32"), np.array([0, 128] + [4] * 30))
    {'lanes': [0, 1], 'bank': 0, 'phase': 0}
    """
    lanes = ins.address_lanes if ins.is_matrix else LANES
    if ins.is_matrix or ins.data_words > 1:
        phase = phase_ids(ins, offs[None], (np.arange(LANES) < lanes)[None])[0].tolist()
    else:  # one phase of 32 lanes
        phase = [0] * LANES
    seen: dict[tuple[int, int], tuple[int, int]] = {}  # (phase, bank) -> (word, lane) first there
    one = ins.lane_words == 1 and not ins.is_matrix  # a lane touches the word of its address
    for lane, off in enumerate(offs[:lanes].tolist()):  # phases never decrease with the lane
        p = phase[lane]
        for word in (off >> 2,) if one else ins.words(off):  # BANK_BYTES = 4
            b = word % BANKS
            first = seen.setdefault((p, b), (word, lane))
            if first[0] != word:
                return {"lanes": [first[1], lane], "bank": b, "phase": p}
    raise AssertionError("no conflict in an instruction that has one")


LINE_BYTES = 128  # a global-memory cache line
