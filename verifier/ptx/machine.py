"""The PTX evaluator: per-thread values of single-definition registers, from ``%tid`` through
the integer arithmetic Triton's lowering emits (anything loaded, a parameter or carried around a
loop is unknown).

>>> compute("shl.b32", [np.array([1, 2]), np.array([4, 4])], ["%r1", "%r2", "4"]).tolist()
[16, 32]
"""

from __future__ import annotations

import re

import numpy as np
from bankproof.models import target
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.verifier.ptx.alu import COMPUTED, compute
from bankproof.verifier.ptx.parse import MEM_OPERAND, Instruction, Kernel, classes_of, type_width

# ----- evaluation --------------------------------------------------------------------------------
_SREG = {"%tid.x": "tid", "%laneid": "lane"}
# the PTX ISA's predefined constants: WARP_SZ, the warp size of every PTX target (models/target.py)
PTX_CONSTANTS = {"WARP_SZ": target.get(DEFAULT_ARCH).warp}
_DEST_LESS = frozenset(
    {"st", "stmatrix", "bar", "barrier", "bra", "brx", "cp", "mbarrier", "fence", "tensormap", "ret",
     "red", "wgmma", "tcgen05", "prefetch", "membar", "exit", "trap", "griddepcontrol"}
)  # fmt: skip


REGS = re.compile(r"%[\w$]+")
_PLAIN = re.compile(r"%[A-Za-z0-9_]+")  # one plain register name
_FLOAT = re.compile(r"\.(?:b?f\d+(?:x\d)?|e[45]m[23]\w*|tf32)(?:\.|$)")  # a float type: not an address


def _reg(name: str, scope: int, local: set[tuple[int, str]]) -> str:
    return f"{name}@{scope}" if (scope, name) in local else name


class PtxMachine:
    """Per-thread values of single-definition registers."""

    def __init__(self, kernel: Kernel):
        self.k = kernel
        tid = np.arange(kernel.threads, dtype=np.int64)
        self.tid = tid
        self.vals: dict[str, np.ndarray] = {}
        self.local: set[tuple[int, str]] = set()
        self._dest_cache = kernel.memo.setdefault("dests", {})  # the same for every machine of a kernel
        if "defs" not in kernel.memo:  # the same for every machine of a kernel
            writers: dict[str, list[Instruction]] | None = kernel.memo.get("writers")
            if writers is None:  # (of the body alone: consumers of one parse share it)
                writers = {}
                for ins in kernel.body:
                    for d in self._dests(ins):
                        writers.setdefault(d, []).append(ins)
                kernel.memo["writers"] = writers
            # a register written in several places by the same unguarded instruction (LLVM
            # duplicates blocks) holds one value whichever way control went; only registers
            # that can matter (the slice) are ever evaluated
            need = self._slice()
            kernel.memo["defs"] = {d: len({(w.opcode, tuple(w.operands)) for w in writers[d]})
                                   for d in need if d in writers}  # fmt: skip
            kernel.memo["guarded"] = {d for d in need if any(w.guard is not None for w in writers.get(d, ()))}
        self.defs: dict[str, int] = kernel.memo["defs"]
        self.guarded: set[str] = kernel.memo["guarded"]
        self.cand: dict[str, dict[tuple, np.ndarray]] = {}
        self.consts: dict[str, np.ndarray | None] = {}

    def _dests(self, ins: Instruction) -> list[str]:
        got = self._dest_cache.get(ins.index)
        if got is None:
            got = self._dest_cache[ins.index] = self._find_dests(ins)
        return got

    def _find_dests(self, ins: Instruction) -> list[str]:
        base = ins.opcode.split(".", 1)[0]
        if base in _DEST_LESS or not ins.operands:
            return []
        first = ins.operands[0]
        if _PLAIN.fullmatch(first):  # one plain register
            return [_reg(first, ins.scope, self.local)] if self.local else [first]
        if base in ("ld", "ldmatrix", "shfl", "tcgen05", "wgmma", "atom"):
            names = re.findall(r"%[\w$]+", first.split("|")[0])
        else:
            names = re.findall(r"%[\w$]+", first)
        if ins.opcode.startswith("setp") and "|" in first:
            names = re.findall(r"%[\w$]+", first)
        return [_reg(n, ins.scope, self.local) for n in names]

    def value(self, op: str, scope: int = 0) -> np.ndarray | None:
        op = op.strip()
        if op in _SREG:
            return self.tid.copy() if _SREG[op] == "tid" else self.tid % 32
        if op.startswith(("%ctaid.", "%nctaid.")):  # the CTA asked for (memo["launch"]), else unknown
            v = self.k.memo.get("launch", {}).get(op[1:])
            return None if v is None else np.full_like(self.tid, v)
        if op.startswith("%tid.") or op.startswith("%ntid."):
            return np.zeros_like(self.tid) if op.startswith("%tid.") else None
        if op == "global_smem":
            return np.zeros_like(self.tid)
        if op in PTX_CONSTANTS:
            return np.full_like(self.tid, PTX_CONSTANTS[op])
        if op.startswith("%"):
            return self.vals.get(_reg(op, scope, self.local))
        if op.startswith("{") and op.endswith("}") and op.count(",") == 1:  # mov.b64 d, {lo, hi}
            lo, hi = (self.value(p, scope) for p in op[1:-1].split(","))
            return None if lo is None or hi is None else (lo & 0xFFFFFFFF) | (hi << 32)
        if op not in self.consts:
            try:
                num = None if op.startswith(("0f", "0d")) else int(op[:-1] if op[-1:] in "Uu" else op, 0)
                if num is not None and num >= 1 << 63:  # a 64-bit pattern: keep its bits in int64
                    num -= 1 << 64
            except ValueError:  # 0x7701U above; a label, a vector, a float here
                num = None
            self.consts[op] = None if num is None else np.full_like(self.tid, num)
        return self.consts[op]

    def address(self, operand: str, scope: int) -> np.ndarray | None:
        m = MEM_OPERAND.search(operand)
        if not m:
            return None
        total = np.zeros_like(self.tid)
        for term in re.split(r"\s*\+\s*", m.group(1)):
            v = self.value(term, scope)
            if v is None:
                return None
            total = total + v
        return total

    def predicate(self, ins: Instruction) -> np.ndarray | None:
        if ins.guard is None:
            return np.ones(self.k.threads, dtype=bool)
        v = self.value(ins.guard[1], ins.scope)
        if v is None:
            return None
        p = v.astype(bool)
        return ~p if ins.guard[0] else p

    def run(self, passes: int = 3) -> None:
        """Evaluate the body; later passes revisit only the instructions whose inputs were not
        known yet (a rotated loop uses values defined further down the text)."""
        need = self._slice()
        self._params(need)
        if "computable" not in self.k.memo:  # the body's integer computations (alike for every machine)
            self.k.memo["computable"] = [
                ins
                for ins in self.k.body
                if ins.opcode.split(".", 1)[0] in COMPUTED and not _FLOAT.search(ins.opcode)
            ]
        todo = [ins for ins in self.k.memo["computable"] if any(d in need for d in self._dests(ins))]
        for _ in range(passes):
            known = len(self.vals)
            todo = [ins for ins in todo if not self.step(ins)]
            if len(self.vals) == known:
                break

    def _params(self, need: set[str]) -> None:
        """Kernel parameters the launch gives (``kernel.memo["launch"]["params"]``: PTX parameter
        name -> integer): ``ld.param`` of one is its value (little-endian bytes at an offset)."""
        given = self.k.memo.get("launch", {}).get("params", {})
        if not given:
            return
        for ins in self.k.body:
            if not ins.opcode.startswith("ld.param") or len(ins.operands) != 2:
                continue
            m = re.fullmatch(r"\[\s*([\w$]+)\s*(?:\+\s*(\d+))?\s*\]", ins.operands[1].strip())
            dests = self._dests(ins)
            if not m or m.group(1) not in given or len(dests) != 1 or dests[0] not in need:
                continue
            if self.defs.get(dests[0], 1) != 1 or dests[0] in self.guarded:
                continue
            w = type_width(ins.opcode)
            v = (int(given[m.group(1)]) >> (8 * int(m.group(2) or 0))) & ((1 << w) - 1)
            self.vals[dests[0]] = np.full_like(self.tid, v)

    def _slice(self) -> set[str]:
        """The registers that can matter: those of shared-memory addresses, predicates and branch
        operands, and (transitively) every register they are computed from."""
        if "slice" not in self.k.memo:
            self.k.memo["slice"] = self._find_slice()
        return self.k.memo["slice"]

    def _find_slice(self) -> set[str]:
        """The closure of the body's own needs (kept as ``base_slice``: it depends on the body
        alone, so every consumer of one parse shares it), then of what a caller asks for; only the
        latter where the caller says it needs nothing else (``only_extra``: the descriptor check)."""
        if self.k.memo.get("only_extra"):
            return self._closure(set(self.k.memo.get("extra_need", ())), frozenset())
        base = self.k.memo.get("base_slice")
        if base is None:
            seeds: set[str] = set()
            classes = classes_of(self.k)
            for ins in self.k.body:
                if ins.guard is not None:
                    seeds.add(_reg(ins.guard[1], ins.scope, self.local))
                op = ins.opcode.split(".", 1)[0]
                if op in ("bra", "brx") or classes[ins.index] is not None:
                    for o in ins.operands:
                        if o.lstrip().startswith("[") or op in ("bra", "brx"):
                            seeds |= {_reg(r, ins.scope, self.local) for r in REGS.findall(o)}
            base = frozenset(self._closure(seeds, frozenset()))
            self.k.memo["base_slice"] = base
        extra = set(self.k.memo.get("extra_need", ())) - base  # registers a caller asks for (descriptors)
        return set(base) | self._closure(extra, base)

    def _closure(self, seeds: set[str], known: frozenset) -> set[str]:
        """``seeds`` and every register they are computed from, not going through ``known``."""
        writers: dict[str, list[Instruction]] = self.k.memo["writers"]
        need, todo = set(seeds), list(seeds)
        while todo:
            for ins in writers.get(todo.pop(), []):
                for o in ins.operands[1:]:
                    for r in REGS.findall(o):
                        r = _reg(r, ins.scope, self.local)
                        if r not in need and r not in known:
                            need.add(r)
                            todo.append(r)
        return need

    def step(self, ins: Instruction) -> bool:
        """Evaluate one instruction; ``False`` if its inputs are not known (yet). A register
        written in several places holds one known value only when every write computes the same
        value for every thread (LLVM duplicates blocks and recomputes thread indices); guarded
        writes make it unknown."""
        if ins.opcode.split(".", 1)[0] not in COMPUTED:
            return True
        dests = self._dests(ins)
        if len(dests) != 1 or dests[0] in self.guarded or dests[0] in self.vals:
            return True
        srcs = [self.value(o, ins.scope) for o in ins.operands[1:]]
        out = compute(ins.opcode, srcs, ins.operands[1:])
        if out is None:
            return False
        d = dests[0]
        cands = self.cand.setdefault(d, {})
        cands[(ins.opcode, tuple(ins.operands))] = out
        if len(cands) == self.defs[d]:
            vals = list(cands.values())
            if all(np.array_equal(vals[0], v) for v in vals[1:]):
                self.vals[d] = vals[0]
        return True
