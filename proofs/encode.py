"""Layouts and the hardware model as Z3 bit-vector terms.

The hardware rules here mirror ``models/hardware.py`` term for term (tested against it on
thousands of instructions): a lane's *phase*, the *bank block* and *word* of a byte address, and
whether a wide load's lanes are *paired*. Two lanes of one instruction conflict when they share a
phase and a bank block but not a word.

>>> import z3
>>> from bankproof.models.hardware import instruction
>>> z3.simplify(bank_block(instruction("ld128"), z3.BitVecVal(48, ADDR))).as_long()
3
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import z3
from bankproof.models.access import access_layout, offsets_of
from bankproof.models.errors import log2
from bankproof.models.hardware import BANK_BYTES, BANKS, LANES, Instr
from bankproof.models.layout import LinearLayout
from bankproof.models.memory import PaddedLayout

ADDR = 32  # bits of a byte address
LANE = 5


def configure(seed: int = 0) -> None:
    """Fixed solver seeds, so runs are reproducible."""
    z3.set_param("smt.random_seed", seed)
    z3.set_param("sat.random_seed", seed)


# ----- the hardware rules ----------------------------------------------------------------------
def lane_width(ins: Instr) -> int:
    """Bytes one lane's request spans (16 for an ldmatrix/stmatrix row)."""
    return 16 if ins.is_matrix else ins.width


def bank_block(ins: Instr, addr: z3.BitVecRef) -> z3.BitVecRef:
    """Which group of banks a lane's request occupies: bank for requests of at most 4 bytes,
    else the aligned block of ``width / 4`` banks."""
    w = lane_width(ins)
    if w <= BANK_BYTES:
        return z3.URem(z3.UDiv(addr, BANK_BYTES), BANKS)
    return z3.URem(z3.UDiv(addr, w), BANKS * BANK_BYTES // w)


def word(ins: Instr, addr: z3.BitVecRef) -> z3.BitVecRef:
    """The 4-byte word (or aligned wider request) a lane reads: two lanes share it iff equal."""
    w = lane_width(ins)
    return z3.UDiv(addr, max(w, BANK_BYTES))


def phase_shift(ins: Instr, paired: z3.BoolRef | bool) -> z3.BitVecRef | int:
    """Lanes ``x`` and ``y`` share a phase iff ``x >> shift == y >> shift``."""
    if ins.is_matrix:
        return 3
    n = max(1, ins.width * LANES // (BANKS * BANK_BYTES))
    base = LANE - log2(n)
    if ins.op == "ld" and n > 1:
        if isinstance(paired, z3.BoolRef):
            return z3.If(paired, z3.BitVecVal(base + 1, LANE), z3.BitVecVal(base, LANE))
        return base + 1 if paired else base
    return base


def same_phase(ins: Instr, x: z3.BitVecRef, y: z3.BitVecRef, paired: z3.BoolRef | bool) -> z3.BoolRef:
    s = phase_shift(ins, paired)
    return z3.LShR(x, s) == z3.LShR(y, s)


def paired_term(ins: Instr, addrs: list[z3.BitVecRef], active: list[z3.BoolRef]) -> z3.BoolRef:
    """Every active lane's address equals lane ^ 1's (partners active), or every one lane ^ 2's."""
    if not (ins.op == "ld" and ins.width >= 8):
        return z3.BoolVal(False)
    options = []
    for x in (1, 2):
        options.append(
            z3.And(
                [z3.Implies(z3.And(active[i], active[i ^ x]), addrs[i] == addrs[i ^ x]) for i in range(LANES)]
            )
        )
    return z3.Or(options)


def conflict(ins: Instr, ax: z3.BitVecRef, ay: z3.BitVecRef) -> z3.BoolRef:
    """Same bank block, different word."""
    return z3.And(bank_block(ins, ax) == bank_block(ins, ay), word(ins, ax) != word(ins, ay))


# ----- layouts -----------------------------------------------------------------------------------
def linear_term(columns: list[int], x: z3.BitVecRef, width: int) -> z3.BitVecRef:
    """The F2-linear map with these columns applied to bit-vector ``x``: XOR of ``columns[i]``
    over the set bits ``i`` of ``x``."""
    acc = z3.BitVecVal(0, width)
    for i, c in enumerate(columns):
        if c:
            acc = acc ^ z3.If(z3.Extract(i, i, x) == 1, z3.BitVecVal(c, width), z3.BitVecVal(0, width))
    return acc


@dataclass(frozen=True)
class SymbolicAccess:
    """An access as Z3 terms: ``address(lane)`` for the instruction picked by the free variables
    ``regs`` (registers beyond the vector), ``warp`` and ``block``; ``paired`` is static."""

    instr: Instr
    vector: int
    regs: z3.BitVecRef | None
    warp: z3.BitVecRef | None
    block: z3.BitVecRef | None
    reg_cols: list[int]
    lane_cols: list[int]
    warp_cols: list[int]
    block_cols: list[int]
    elem_bytes: int
    offset_bits: int
    padding: tuple[tuple[int, int], ...]
    paired: bool
    dist: LinearLayout

    @functools.cached_property
    def instruction_offset(self) -> z3.BitVecRef:
        """The element offset the instruction's registers, warp and block add (every lane alike):
        built once, shared by every lane's term."""
        off = z3.BitVecVal(0, ADDR)
        terms = ((self.reg_cols, self.regs), (self.warp_cols, self.warp), (self.block_cols, self.block))
        for cols, v in terms:
            if v is not None:
                off = off ^ linear_term(cols, v, ADDR)
        return z3.simplify(off)

    def element_offset(self, lane: z3.BitVecRef) -> z3.BitVecRef:
        return linear_term(self.lane_cols, lane, ADDR) ^ self.instruction_offset

    def address(self, lane: z3.BitVecRef) -> z3.BitVecRef:
        """Byte address: the (unpadded) element offset, then padding, times the element size."""
        base = self.element_offset(lane)
        off = base
        for interval, pad in self.padding:
            off = off + z3.UDiv(base, interval) * pad
        return off * self.elem_bytes

    @property
    def lanes_used(self) -> int:
        """Lanes that supply addresses (8 per matrix for ldmatrix/stmatrix)."""
        return self.instr.address_lanes

    def variables(self) -> list[z3.BitVecRef]:
        return [v for v in (self.regs, self.warp, self.block) if v is not None]


def symbolic_access(
    dist: LinearLayout,
    memory: LinearLayout | PaddedLayout,
    elem_bits: int,
    ins: Instr,
    vector: int,
    tag: str = "",
) -> SymbolicAccess:
    """Encode an access whose instructions move ``vector`` elements per lane (as enumerated by
    ``models.access.build_access``)."""
    lay = access_layout(dist, memory)
    padding: tuple[tuple[int, int], ...] = ()
    if isinstance(memory, PaddedLayout):
        # Combine unpadded (linear) offsets; the padding is applied to the result.
        lin = memory.linear
        inv = LinearLayout((("offset", lin.in_bases("offset")),), lin.out_dims).invert()

        def cols(dim: str) -> list[int]:
            return [int(inv.apply(**dict(zip(lin.out_dim_names, b)))["offset"]) for b in lay.in_bases(dim)]

        padding = tuple(memory.intervals)
        total_bits = len(lin.in_bases("offset"))
    else:

        def cols(dim: str) -> list[int]:
            return offsets_of(memory, list(lay.in_bases(dim)))  # from the bases: no table

        total_bits = memory.out_bits

    reg = cols("register")
    lane_cols = cols("lane")
    if ins.is_matrix:
        # Lane l = 8j + r supplies matrix j's row r: the element at layout lane 4r, register k*j
        # with k = 4 / element bytes (.trans, 16-bit: lane r // 2, register 2j + r % 2). Registers
        # past k * matrices pick the instruction.
        m_bits = log2(ins.matrices)
        k_bits = log2(max(1, 32 // elem_bits))
        per = (1 << k_bits) * ins.matrices
        if ins.trans:
            lane_cols = [reg[0], lane_cols[0], lane_cols[1]] + reg[1 : 1 + m_bits]
        else:
            lane_cols = lane_cols[2:5] + reg[k_bits : k_bits + m_bits]
        reg_chunk = reg[log2(per) :]
    else:
        reg_chunk = reg[log2(vector) :]
    lanes = [lay.pack_dim0_lowest(b) for b in lay.in_bases("lane")]
    paired = ins.op == "ld" and ins.width >= 8 and (lanes[0] == 0 or lanes[1] == 0)

    def var(name: str, n: int) -> z3.BitVecRef | None:
        return z3.BitVec(f"{name}{tag}", n) if n else None

    return SymbolicAccess(
        ins,
        vector,
        var("reg", len(reg_chunk)),
        var("warp", len(cols("warp"))),
        var("block", len(cols("block"))),
        reg_chunk,
        lane_cols,
        cols("warp"),
        cols("block"),
        elem_bits // 8,
        total_bits,
        padding,
        paired,
        lay,
    )
