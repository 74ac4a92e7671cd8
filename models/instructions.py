"""The shared-memory instruction kinds the phase model covers, by PTX, short and SASS name.

>>> instruction("LDS.128").name, instruction("ldsm.x4.trans").name
('ld.shared.v4.b32', 'ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16')
>>> Instr("st", 8).short
'st64'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bankproof.models.errors import InputError

BANKS = 32
BANK_BYTES = 4
LANES = 32


@dataclass(frozen=True)
class Instr:
    """One shared-memory instruction kind.

    ``op`` is ``ld``/``st`` (per-lane accesses of ``width`` bytes) or ``ldsm``/``stsm``
    (``ldmatrix``/``stmatrix``: ``matrices`` 8x8 b16 matrices, rows of 16 bytes addressed by
    lanes ``0 .. 8*matrices-1``). A ``st`` whose ``variant`` is ``ca`` or ``cg`` is a
    ``cp.async`` of that cache mode: global to shared, ``width`` bytes per lane."""

    op: str
    width: int = 4
    matrices: int = 0
    trans: bool = False
    variant: str = ""  # "b64" for ld/st.shared.b64 (same width as .v2.b32); "ca"/"cg": cp.async

    @property
    def is_copy(self) -> bool:
        """A ``cp.async`` (LDGSTS): its shared side is a store of ``width`` bytes per lane."""
        return self.variant in ("ca", "cg")

    @property
    def name(self) -> str:
        """The PTX name."""
        if self.is_copy:
            return f"cp.async.{self.variant}.shared.global.{self.width}"
        if self.op in ("ld", "st"):
            suffix = {1: "u8", 2: "u16", 4: "b32", 8: "v2.b32", 16: "v4.b32"}[self.width]
            if self.variant == "b64":
                suffix = "b64"
            return f"{self.op}.shared.{suffix}"
        base = "ldmatrix" if self.op == "ldsm" else "stmatrix"
        t = ".trans" if self.trans else ""
        return f"{base}.sync.aligned.m8n8.x{self.matrices}{t}.shared.b16"

    @property
    def short(self) -> str:
        """The short name (``ld128``, ``st32``, ``ldsm.x4.trans``; ``cp16.cg``: bytes)."""
        if self.is_copy:
            return f"cp{self.width}.{self.variant}"
        if self.op in ("ld", "st"):
            return f"{self.op}{self.width * 8}" + ("b" if self.variant == "b64" else "")
        return f"{self.op}.x{self.matrices}" + (".trans" if self.trans else "")

    @property
    def sass(self) -> str:
        if self.is_copy:
            return "LDGSTS.E" + (".BYPASS" if self.variant == "cg" else "") + f".{8 * self.width}"
        if self.op in ("ld", "st"):
            base = "LDS" if self.op == "ld" else "STS"
            suffix = {1: ".U8", 2: ".U16", 4: "", 8: ".64", 16: ".128"}[self.width]
            return base + suffix
        base = "LDSM" if self.op == "ldsm" else "STSM"
        return f"{base}.16.{'MT88' if self.trans else 'M88'}.{self.matrices}"

    @property
    def is_load(self) -> bool:
        return self.op in ("ld", "ldsm")

    @property
    def is_matrix(self) -> bool:
        return self.op in ("ldsm", "stsm")

    @property
    def address_lanes(self) -> int:
        """How many lanes supply addresses (all 32 for ld/st; 8 per matrix for ldmatrix)."""
        return LANES if not self.is_matrix else 8 * self.matrices

    @property
    def min_arch(self) -> int:
        return 90 if self.op == "stsm" else 80

    @property
    def lane_bytes(self) -> int:
        """Bytes one lane's address covers: its width, or a 16-byte row for ldmatrix/stmatrix."""
        return 16 if self.is_matrix else self.width

    @property
    def lane_words(self) -> int:
        """4-byte bank words one lane's address covers (at least one: sub-word lanes share one).

        >>> [instruction(n).lane_words for n in ("ld128", "ldsm.x1", "ld8")]
        [4, 4, 1]
        """
        return max(1, self.lane_bytes // BANK_BYTES)

    @property
    def data_words(self) -> int:
        """32-bit registers of data one lane moves per instruction (one per matrix for
        ldmatrix/stmatrix; sub-word ld/st still use one register).

        >>> [instruction(n).data_words for n in ("ldsm.x4", "st64", "ld16")]
        [4, 2, 1]
        """
        return self.matrices if self.is_matrix else max(1, self.width // BANK_BYTES)

    def words(self, byte_addr: int) -> list[int]:
        """The 4-byte words (``byte // 4``) one lane at ``byte_addr`` touches.

        >>> instruction("st64").words(8)
        [2, 3]
        """
        return list(range(byte_addr // BANK_BYTES, (byte_addr + self.lane_bytes - 1) // BANK_BYTES + 1))


def all_instructions() -> list[Instr]:
    """Every instruction kind the model covers."""
    out = [Instr(op, w) for op in ("ld", "st") for w in (1, 2, 4, 8, 16)]
    out += [Instr(op, 8, variant="b64") for op in ("ld", "st")]
    out += [Instr(op, 16, m, t) for op in ("ldsm", "stsm") for m in (1, 2, 4) for t in (False, True)]
    return out


def _names() -> dict[str, Instr]:
    table: dict[str, Instr] = {}
    for ins in all_instructions():
        for n in (ins.name, ins.short, ins.sass):
            table[n.lower()] = ins
    for op in ("ld", "st"):  # common aliases
        table[f"{op}.shared.v2.u32"] = Instr(op, 8)
        table[f"{op}.shared.v4.u32"] = Instr(op, 16)
        table[f"{op}.shared.u32"] = table[f"{op}.shared.b32"] = Instr(op, 4)
        table[f"{op}.shared.b8"] = table[f"{op}.shared.s8"] = Instr(op, 1)
        table[f"{op}.shared.b16"] = table[f"{op}.shared.s16"] = Instr(op, 2)
        table[f"{op}.shared.u64"] = Instr(op, 8, variant="b64")
    for mode, widths in (("ca", (4, 8, 16)), ("cg", (16,))):
        for w in widths:
            ins = Instr("st", w, variant=mode)
            for n in (ins.name, ins.short, ins.sass):
                table[n.lower()] = ins
    table["lds.32"] = Instr("ld", 4)
    table["sts.32"] = Instr("st", 4)
    return table


_NAMES = _names()


def instruction(name: str) -> Instr:
    """Look up an instruction by PTX, short or SASS name (``.volatile`` is ignored).

    >>> instruction("st.shared.v2.b32").short, instruction("STSM.16.MT88.2").name
    ('st64', 'stmatrix.sync.aligned.m8n8.x2.trans.shared.b16')
    """
    key = re.sub(r"\.volatile", "", str(name).strip().lower())
    if key not in _NAMES:
        raise InputError(
            "instr",
            "name",
            "is not a known shared-memory instruction "
            "(e.g. ld.shared.v4.b32, ld128, LDS.128, ldmatrix.sync.aligned.m8n8.x4.shared.b16, "
            "ldsm.x4)",
            name,
        )
    return _NAMES[key]
