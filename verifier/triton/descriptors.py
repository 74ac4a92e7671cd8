"""Triton's MMA descriptors checked against its own shared layouts: every ``wgmma`` (sm90) and
``tcgen05.mma`` (sm100) operand descriptor in a kernel's PTX, evaluated by the PTX evaluator (with
``global_smem`` at 0, so the start field is the buffer offset), decoded, and compared with what
bankproof derives from the operand's ``nvmma_shared`` encoding in the TTGIR: the layout type, the
LBO/SBO the tile uses (CUTLASS's canonical rules), and that the descriptor reads every element of the
operand tile where the encoding puts it (one 32-byte K step at a time), which also proves a TMA write
in that encoding and the descriptor read agree.

>>> wgmma_operands("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16", ["{%f1}", "%rd1", "%rd2", "%p1"])
('f16', [1, 2])
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
from bankproof.models.access import element_offsets
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.engines.canonical import derive, reads_tile
from bankproof.models.engines.descriptors import Descriptor, decode
from bankproof.models.engines.tma import mode, swizzled
from bankproof.models.errors import InputError
from bankproof.models.notation.triton import parse_triton
from bankproof.models.notation.triton_shared import NVMMAShared
from bankproof.verifier.ptx.machine import PtxMachine, compute
from bankproof.verifier.ptx.parse import parse_kernel
from bankproof.verifier.triton.scan_records import DescriptorSummary
from bankproof.verifier.triton.ttgir import MMA_OPS, read_ttgir

SM90_MODES = {0: "none", 32: "32B", 64: "64B", 128: "128B"}
_TYPES = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


def wgmma_operands(opcode: str, operands: list[str]) -> tuple[str, list[int]] | None:
    """The input type and the operand positions that are descriptors (64-bit registers) of a
    ``wgmma.mma_async`` or ``tcgen05.mma`` instruction."""
    if opcode.startswith("wgmma.mma_async"):
        parts = opcode.split(".")
        return parts[-1], [i for i in (1, 2) if i < len(operands) and operands[i].strip().startswith("%rd")]
    if opcode.startswith("tcgen05.mma") and not opcode.startswith("tcgen05.mma.ws"):
        kind = re.search(r"kind::(\w+)", opcode)
        return (kind.group(1) if kind else "?"), [i for i in (1, 2) if operands[i].strip().startswith("%rd")]
    return None


@dataclass(frozen=True)
class DescriptorCheck:
    """One descriptor operand of one MMA instruction, decoded and compared."""

    line: int
    operand: str  # "A" or "B"
    value: int | None  # None: not a constant the evaluator could fold
    encoding: str
    expected: dict
    decoded: dict | None
    ok: bool | None  # None: not decided (value unknown)
    why: str = ""
    first_iteration: bool = False  # the value is the loop's first iteration's (carried values initial)


def _operand_tiles(
    ttgir: str, mod=None
) -> list[tuple[NVMMAShared, tuple[int, ...], NVMMAShared, tuple[int, ...], str]]:
    mod = mod if mod is not None else read_ttgir(ttgir, MMA_OPS)
    out = []
    for op in mod.ops:
        mem = op.types[:2]  # A, B: either may be in registers or tensor memory instead
        if len(mem) < 2:
            continue

        def nvmma(t) -> NVMMAShared | None:
            text = mod.aliases.get(t.encoding.lstrip("#"), t.encoding)
            is_nvmma = t.kind == "memdesc" and "nvmma_shared" in text
            return parse_triton(mod.expand(t.encoding)) if is_nvmma else None

        out.append((nvmma(mem[0]), mem[0].shape[-2:], nvmma(mem[1]), mem[1].shape[-2:], op.name))
    return out


def _tile(enc: NVMMAShared, shape: tuple[int, ...], operand: str) -> tuple[np.ndarray, str]:
    """The operand tile as ``(mn, k)`` byte offsets before the swizzle (the encoding's offsets with
    its XOR, an involution, undone), and its major-ness."""
    off = element_offsets(enc.to_layout(list(shape))) * (enc.element_bits // 8)
    off = np.asarray(swizzled(mode(SM90_MODES[enc.swizzle]).sw, off))
    contiguous_last = not enc.transposed
    if operand == "A":  # [M, K]
        return off, "K" if contiguous_last else "MN"
    return off.T, "MN" if contiguous_last else "K"  # [K, N] -> (N, K)


def check(ttgir: str, ptx: str, arch: str = DEFAULT_ARCH, source=None) -> list[DescriptorCheck]:
    """Every MMA descriptor operand of the kernel against the TTGIR's operand encodings
    (``source``: the compile already read, :mod:`.source`)."""
    k = source.fresh_kernel() if source is not None else parse_kernel(ptx)
    sites = []
    for ins in k.body:
        got = wgmma_operands(ins.opcode, ins.operands)
        if got:
            sites += [(ins, "AB"[pos - 1], ins.operands[pos].strip()) for pos in got[1]]
    k.memo["extra_need"] = {reg for _, _, reg in sites}
    k.memo["only_extra"] = True  # the descriptors' registers and what they are computed from, no more
    m = PtxMachine(k)
    m.run()
    dots = _candidates(_operand_tiles(ttgir, source.mma_module() if source is not None else None))
    out, compared = [], {}  # (operand, value) -> its check: each distinct descriptor compared once
    tiles: dict = {}  # (candidate, fields) -> whether they read its tile: stages differ in start only
    for ins, operand, reg in sites:
        v, first = m.value(reg, ins.scope), False
        if v is None:  # computed in a loop: its first iteration (carried values at their initial ones)
            v, first = _first_iteration(m, reg, ins.scope, {}), True
        # one value per warpgroup (each reads its own rows); every one is checked
        step = 128 if v is not None and v.size >= 128 else 1
        values = [None] if v is None else sorted({int(x) % (1 << 64) for x in v[::step]})
        if v is not None and any(len(set(v[g : g + 128].tolist())) != 1 for g in range(0, v.size, 128)):
            values = [None]  # differs inside a warpgroup: not a descriptor the evaluator understood
        checks = []
        for value in values:
            if (operand, value) not in compared:
                compared[(operand, value)] = _compare(ins.line, operand, value, dots, arch, tiles)
            checks.append(replace(compared[(operand, value)], line=ins.line))
        c = next((x for x in checks if x.ok is not True), checks[0])
        out.append(replace(c, first_iteration=first) if first else c)
    return out


def _first_iteration(m: PtxMachine, op: str, scope: int, seen: dict, depth: int = 0) -> np.ndarray | None:
    """``op``'s value in the loop's first iteration: a register written in several places takes its
    first write in program order (the initial value of a carried one); one with no write the
    evaluator can follow (a load, a parameter) is unknown."""
    op = op.strip()
    if op.startswith("{") and op.endswith("}") and op.count(",") == 1:
        lo, hi = (_first_iteration(m, p, scope, seen, depth + 1) for p in op[1:-1].split(","))
        return None if lo is None or hi is None else (lo & 0xFFFFFFFF) | (hi << 32)
    v = m.value(op, scope)
    if v is not None or not op.startswith("%") or depth > 64:
        return v
    if op in seen:
        return seen[op]
    seen[op] = None
    writers = m.k.memo["writers"].get(op, [])
    if not writers:
        return None
    w = writers[0]
    srcs = [_first_iteration(m, o, w.scope, seen, depth + 1) for o in w.operands[1:]]
    seen[op] = compute(w.opcode, srcs, w.operands[1:])
    return seen[op]


@dataclass(frozen=True)
class _Operand:
    """One nvmma_shared MMA operand of the TTGIR: its tile (before the swizzle), major-ness and the
    descriptor fields bankproof derives for it, computed once per kernel."""

    text: str
    tile: np.ndarray
    major: str
    bits: int
    expected: dict


def _candidates(dots: list) -> dict[str, list[_Operand]]:
    """The candidate operands of each position (A, B) over the kernel's MMA ops."""
    out: dict[str, list[_Operand]] = {"A": [], "B": []}
    seen: set = set()  # an operand several MMA ops share is one candidate
    for pa, sa, pb, sb, _ in dots:
        for operand, enc, shape in (("A", pa, sa), ("B", pb, sb)):
            if enc is None or (operand, enc, tuple(shape)) in seen:  # not nvmma_shared here, or seen
                continue
            seen.add((operand, enc, tuple(shape)))
            tile, major = _tile(enc, shape, operand)
            mode = SM90_MODES[enc.swizzle]
            expected = {"swizzle": mode, "major": major, **derive(tile, mode, major, enc.element_bits)}
            tr = str(enc.transposed).lower()
            text = f"nvmma_shared {enc.swizzle}B transposed={tr} {enc.element_bits}-bit {list(shape)}"
            out[operand].append(_Operand(text, tile, major, enc.element_bits, expected))
    return out


def _compare(line: int, operand: str, value: int | None, dots: dict[str, list[_Operand]],
             arch: str, tiles: dict) -> DescriptorCheck:  # fmt: skip
    tries = []
    for o in dots[operand]:
        if value is None:
            tries.append(DescriptorCheck(line, operand, None, o.text, o.expected, None, None,
                                         "descriptor not a constant"))  # fmt: skip
            continue
        try:
            d = decode(value, arch)
        except InputError as e:
            tries.append(DescriptorCheck(line, operand, value, o.text, o.expected, None, False, str(e)))
            continue
        decoded = {"swizzle": d.swizzle.name, "lbo": d.lbo, "sbo": d.sbo, "base_offset": d.base_offset,
                   "start": d.start}  # fmt: skip
        why = [f"{f} {decoded[f]} != {o.expected[f]}" for f in ("swizzle", "lbo", "sbo")
               if o.expected.get(f) is not None and decoded[f] != o.expected[f]]  # fmt: skip
        if not why:
            key = (id(o), d.lbo, d.sbo, d.base_offset, d.swizzle)
            if key not in tiles:
                rel = Descriptor(arch, 0, d.lbo, d.sbo, d.base_offset, d.swizzle)
                tiles[key] = reads_tile(rel, o.tile, o.major, o.bits)
            if not tiles[key]:
                why.append("does not read the operand tile where the encoding puts it")
        ok = not why
        tries.append(DescriptorCheck(line, operand, value, o.text, o.expected, decoded, ok, "; ".join(why)))
    if not tries:
        which = operand if any(dots.values()) else "MMA"
        why = f"no nvmma_shared {which} operand in the TTGIR"
        return DescriptorCheck(line, operand, value, "", {}, None, None, why)
    return next((t for t in tries if t.ok), tries[0])


def summary(ttgir: str, ptx: str, arch: str, source=None) -> DescriptorSummary | None:
    """How many MMA descriptors were checked, agree and are not constants, and the mismatches,
    for a kernel with MMA descriptors on sm90/sm100 (``None`` when it has none): what the corpus
    and the scan report."""
    if arch not in ("sm90", "sm100") or not re.search(r"wgmma\.mma_async|tcgen05\.mma", ptx):
        return None
    try:
        checks = check(ttgir, ptx, arch, source)
    except (InputError, ValueError, KeyError, IndexError) as e:
        return DescriptorSummary(checked=0, agree=0, undecided=0, note=f"not read: {e}", mismatches=())
    bad = [f"descriptor at PTX line {c.line} ({c.operand}, {c.encoding}): {c.why}"
           for c in checks if c.ok is False]  # fmt: skip
    return DescriptorSummary(checked=len(checks), agree=sum(c.ok is True for c in checks),
                             undecided=sum(c.ok is None for c in checks), mismatches=tuple(bad))  # fmt: skip


__all__ = ["DescriptorCheck", "check", "summary", "wgmma_operands"]
