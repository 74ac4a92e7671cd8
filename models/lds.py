"""Lane-group shared memory (LDS): a warp instruction's lanes are served in *lane groups*;
within a group each bank serves one 4-byte word per cycle and lanes asking for the same word
share it (broadcast), so a group costs the largest number of distinct words any bank is asked
for (at least one cycle when a lane is active). Lanes of different groups never conflict; an
instruction's ideal is one cycle per group. The groups of an (arch, instruction) and where they
are published come from :mod:`bankproof.models.target`; every published grouping is an F2 coset
structure (each group = lane 0's group XOR a constant), which the algebra and Z3 engines use and
:func:`group_subspace` checks.

>>> r = Rule("x", 32, 64, "ds_read_b128", 16, cosets([1, 2, 20], 64), "a source")
>>> sorted(np.flatnonzero(r.groups == r.groups[0]).tolist())
[0, 1, 2, 3, 20, 21, 22, 23]
>>> group_subspace(r)  # lane 0's group is the span of these lane indices
[1, 2, 20]
>>> w = Rule("x", 32, 64, "ds_write_b128", 16, consecutive(8, 64), "a source")
>>> counts, ideals = evaluate(w, np.arange(64)[None, :] * 16)
>>> int(counts[0]), int(ideals[0])
(8, 8)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from bankproof.models import f2
from bankproof.models.access import (
    MAX_ACCESS_BITS,
    WarpInstructions,
    access_layout,
    element_offsets,
    vector_cap,
    vector_ok,
    widest_vector,
)
from bankproof.models.errors import InputError, Untranslatable

BANK_BYTES = 4


def consecutive(size: int, warp: int) -> np.ndarray:
    """Group id of every lane: groups of ``size`` consecutive lanes."""
    return np.arange(warp) // size


def cosets(span: list[int], warp: int) -> np.ndarray:
    """Group id of every lane: lanes in one coset of span(``span``) share a group."""
    basis = f2.echelon(list(span))
    reps: dict[int, int] = {}
    out = np.zeros(warp, dtype=np.int64)
    for lane in range(warp):
        rep = f2.reduce(lane, basis)
        out[lane] = reps.setdefault(rep, len(reps))
    return out


@dataclass(frozen=True)
class Rule:
    """One (arch, instruction): its lane groups (group id per lane) and where the rule is from.
    It is the access's instruction too (``name``, ``short``, ``width``), as ``Instr`` is for the
    phase model."""

    arch: str
    banks: int
    warp: int
    instr: str  # ds_read_b128, ...
    width: int  # bytes per lane
    groups: np.ndarray | None  # None: no published grouping (results are unknown)
    source: str

    @property
    def kind(self) -> str:
        return "load" if self.instr.startswith("ds_read") else "store"

    @property
    def name(self) -> str:
        return self.instr

    @property
    def short(self) -> str:
        return self.instr

    @property
    def ngroups(self) -> int:
        """How many lane groups one instruction is served in (0 when unpublished)."""
        return 0 if self.groups is None else int(self.groups.max()) + 1

    @property
    def text(self) -> str:
        """The rule in words, for reports."""
        if self.groups is None:
            return f"{self.instr} on {self.arch}: no published lane grouping ({self.source})"
        n = self.ngroups
        where = f"{self.instr} on {self.arch} ({self.banks} banks)"
        return f"{where}: {n} lane groups of {self.warp // n}, {self.source}"


INSTRS = {f"ds_{op}_b{bits}": bits // 8 for op in ("read", "write") for bits in (32, 64, 128)}
UNPUBLISHED = "nothing published that this project found"


def rule(arch: str, banks: int, warp: int, instr: str, groups: np.ndarray | None, source: str) -> Rule:
    """The rule of ``instr`` (``ds_read_b128``, ...); ``groups`` None when unpublished."""
    if instr not in INSTRS:
        raise InputError("lds", "instr", f"must be one of {', '.join(INSTRS)} (or auto)", instr)
    return Rule(arch, banks, warp, instr, INSTRS[instr], groups, source)


def group_subspace(r: Rule) -> list[int]:
    """A basis (lane indices) of lane 0's group, which must be a subspace whose cosets are the
    other groups (true of every published rule; checked here)."""
    assert r.groups is not None
    members = np.flatnonzero(r.groups == r.groups[0]).tolist()
    basis = f2.echelon(members)
    if len(members) != 1 << len(basis):
        raise AssertionError(f"{r.instr} on {r.arch}: lane 0's group is not a subspace")
    for lane in range(r.warp):
        same = np.flatnonzero(r.groups == r.groups[lane]).tolist()
        if sorted(same) != sorted(lane ^ m for m in members):
            raise AssertionError(f"{r.instr} on {r.arch}: groups are not cosets")
    return sorted(_small_basis(members))


def _small_basis(members: list[int]) -> list[int]:
    """A basis of span(members) taking the smallest members first (readable: [1, 2, 20])."""
    out: list[int] = []
    for m in sorted(members):
        if m and f2.reduce(m, f2.echelon(out)):
            out.append(m)
    return out


def evaluate(r: Rule, addresses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, ideals)`` of ``(N, 64)`` per-lane byte addresses: per group, the most distinct
    words one bank is asked for; the ideal is one cycle per group."""
    if r.groups is None:
        raise InputError("lds", "instr", f"has no published lane grouping on {r.arch}", r.instr)
    addr = np.asarray(addresses, dtype=np.int64)
    n = addr.shape[0]
    words = addr[..., None] // BANK_BYTES + np.arange(r.width // BANK_BYTES)  # (N, 64, k)
    grp = np.broadcast_to(r.groups[None, :, None], words.shape).ravel()
    ins = np.broadcast_to(np.arange(n)[:, None, None], words.shape).ravel()
    w = words.ravel()
    ngroups = r.ngroups
    key = np.unique(np.stack([ins, grp, w % r.banks, w]), axis=1)  # distinct (instr, group, bank, word)
    ibg, per = np.unique(key[:3], axis=1, return_counts=True)
    worst = np.zeros((n, ngroups), dtype=np.int64)
    np.maximum.at(worst, (ibg[0], ibg[1]), per)
    return worst.sum(axis=1), np.full(n, ngroups, dtype=np.int64)


def conflict_pair(r: Rule, lane_addresses: np.ndarray) -> dict | None:
    """The lowest two lanes of one group asking one bank for different words, or None."""
    assert r.groups is not None
    seen: dict[tuple[int, int], tuple[int, int]] = {}
    for lane in range(r.warp):
        first = int(lane_addresses[lane]) // BANK_BYTES
        for w in range(first, first + r.width // BANK_BYTES):
            key = (int(r.groups[lane]), w % r.banks)
            if key in seen and seen[key][0] != w:
                return {"lanes": [seen[key][1], lane], "bank": w % r.banks, "group": int(r.groups[lane])}
            seen.setdefault(key, (w, lane))
    return None


def build(
    dist, memory, elem_bits: int, kind: str, instr: str, rule_of, warp: int, arch: str
) -> WarpInstructions:
    """Enumerate an access of ``warp``-lane warps: ``instr`` ``auto`` picks the widest legal
    ``ds_read``/``ds_write`` (4 to 16 bytes per lane) as the compiler does; ``rule_of(instr)``
    gives an instruction's rule. The result's ``instr`` is that :class:`Rule`."""

    if dist.in_bits > MAX_ACCESS_BITS:
        raise InputError(
            "access", "layout", f"has 2^{dist.in_bits} points, over the limit of 2^{MAX_ACCESS_BITS}"
        )
    lanes = dist.in_bases("lane")
    if 1 << len(lanes) != warp:
        raise InputError(
            "access",
            "layout",
            f"has a {1 << len(lanes)}-lane warp; {arch} waves have {warp} lanes",
            len(lanes),
        )
    if elem_bits % 8 or elem_bits > 64:
        raise InputError("access", "dtype", "must be 8, 16, 32 or 64 bits wide", elem_bits)
    lin = getattr(memory, "linear", memory)
    if sorted(dist.out_dims) != sorted(lin.out_dims):
        raise InputError(
            "access", "layout", f"covers {dict(dist.out_dims)} but the memory covers {dict(lin.out_dims)}"
        )
    dist = access_layout(dist, memory)
    eb = elem_bits // 8
    table = dist.table()
    nreg, nwarp, nblock = (dist.in_dim_size(d) for d in ("register", "warp", "block"))
    addr = (element_offsets(memory)[tuple(table.T)] * eb).reshape(nblock, nwarp, warp, nreg)
    coords = table.reshape(nblock, nwarp, warp, nreg, -1)
    op = "read" if kind == "load" else "write"
    if instr == "auto" or instr.startswith("vector"):
        v = widest_vector(addr, eb, vector_cap(instr))
        if v * eb < 4:
            raise Untranslatable(
                "access", "instr", f"would move {v * eb} bytes per lane; sub-dword ds_{op} is not modeled"
            )
        r = rule_of(f"ds_{op}_b{v * eb * 8}")
    else:
        r = rule_of(instr)
        if r.kind != kind:
            raise InputError("access", "instr", f"is a {r.kind} but the access is a {kind}", instr)
        v = r.width // eb
        if r.width % eb or v > nreg or not vector_ok(addr, v, eb):
            raise InputError("access", "instr", f"needs {v} consecutive aligned elements per lane", instr)
    first = addr[..., ::v]
    n_chunks = first.shape[-1]
    addresses = first.transpose(0, 1, 3, 2).reshape(-1, warp)
    c = coords[..., ::v, :].transpose(0, 1, 3, 2, 4).reshape(-1, warp, coords.shape[-1])
    blk, wrp, chunk = np.meshgrid(np.arange(nblock), np.arange(nwarp), np.arange(n_chunks), indexing="ij")
    return WarpInstructions(
        kind, r, v, addresses, wrp.reshape(-1), chunk.reshape(-1) * v, c, blk.reshape(-1), None
    )


def algebra(memory, dist, elem_bits: int, r: Rule, vector: int) -> tuple[int | None, tuple[int, ...], str]:
    """Lemma 9.4 with lane groups: per group ``2^c`` cycles, ``c`` the dimension of the lane
    differences inside lane 0's group that stay in one bank block but leave the word; returns
    ``(cycles per instruction, conflict directions, reason it does not apply)``."""
    from bankproof.models.access import access_layout
    from bankproof.models.lemmas import conflict_directions
    from bankproof.models.space import Space

    if r.groups is None:
        return None, (), "no published lane grouping"
    space = Space.of(memory)
    dist = access_layout(dist, memory).transpose_outs(memory.out_dim_names)
    cols = [space.pack_row_major(x) for x in memory.in_bases("offset")]
    eb = max(1, elem_bits // 8)
    vec_bits = vector.bit_length() - 1
    regs = [space.pack_row_major(x) for x in dist.in_bases("register") if any(x)]
    if any(x not in regs for x in cols[:vec_bits]):
        return None, (), "the memory layout's vector bits are not registers of the access"
    block = max(r.width, BANK_BYTES)
    bank_bits = (r.banks * BANK_BYTES // block).bit_length() - 1
    sub = (block // (vector * eb)).bit_length() - 1  # element bits inside one lane's block beyond the vector
    word = cols[: vec_bits + sub]
    idx = cols[vec_bits + sub + bank_bits :]
    lane_vecs = [space.pack_row_major(x) for x in dist.in_bases("lane")]

    def lanes_of(index: int) -> int:
        v = 0
        for bit, lv in enumerate(lane_vecs):
            if index >> bit & 1:
                v ^= lv
        return v

    same = [lanes_of(m) for m in group_subspace(r)]
    directions = conflict_directions(word, idx, same)
    return r.ngroups << len(directions), tuple(directions), ""
