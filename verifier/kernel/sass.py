"""What the GPU runs: a kernel's PTX compiled by ptxas and read back with nvdisasm, every SASS
shared-memory instruction with the PTX line it came from (ptxas's own line table: each PTX
instruction is given a ``.loc`` naming its PTX line before ptxas sees it).

The tools come from PyPI (the ``cuda`` extra): ``ptxas`` from ``nvidia-cuda-nvcc`` 13.0 (the
device's ptxas, V13.0.88, so the SASS read here is the SASS measured there) and ``nvdisasm`` from
``nvidia-cuda-nvdisasm`` (:data:`~bankproof.models.target.SASS_TOOL_PACKAGES`); Triton's wheel
and ``PATH`` are the fallbacks. No GPU is needed.

>>> sass_kind("LDS.128"), sass_kind("LDSM.16.MT88.4"), sass_kind("LDGSTS.E.BYPASS.128"), sass_kind("FFMA")
(('lsu', 'ld128'), ('lsu', 'ldsm.x4.trans'), ('ldgsts', 'cp16'), None)
>>> print(with_ptx_lines(".visible .entry k()\\n{\\n .loc 1 3 0\\n ld.shared.u32 %r1, [x];\\n}"))
.visible .entry k()
{
<BLANKLINE>
.loc 1 4 0
 ld.shared.u32 %r1, [x];
}
.file 1 "ptx"
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from bankproof.models import target
from bankproof.models.errors import TimeLimit

LINE_FILE = "ptx"  # the name the line table gives the PTX (file index 1: nvdisasm fails on others)
_MEMORY = 8 << 30  # the tools' address space


@dataclass(frozen=True)
class Tools:
    """Where ptxas and nvdisasm are, and their versions (``V13.0.88``)."""

    ptxas: str
    nvdisasm: str
    ptxas_version: str
    nvdisasm_version: str

    def text(self) -> str:
        return f"ptxas {self.ptxas_version}, nvdisasm {self.nvdisasm_version}"


@dataclass(frozen=True)
class SassOp:
    """One SASS instruction: its function, byte offset, the PTX line it came from (0: none),
    guard (``@!PT``: never runs), opcode and operands as nvdisasm prints them."""

    function: str
    pc: int
    line: int
    guard: str
    opcode: str
    operands: str

    @property
    def never_runs(self) -> bool:
        return self.guard == "@!PT"


def _candidates(tool: str) -> list[Path]:
    import importlib.util

    out = []
    for module, sub in target.SASS_TOOL_PACKAGES:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        for loc in (spec.submodule_search_locations or []) if spec else []:
            out.append(Path(loc) / sub / tool)
    try:
        spec = importlib.util.find_spec("triton")
    except (ImportError, ValueError):
        spec = None
    if spec and spec.origin:
        out.append(Path(spec.origin).parent.joinpath(*target.SASS_TOOLS_IN_TRITON, tool))
    on_path = shutil.which(tool)
    if on_path:
        out.append(Path(on_path))
    return [p for p in out if p.is_file() and os.access(p, os.X_OK)]


def _version(path: Path) -> str:
    try:
        out = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"\bV(\d+\.\d+\.\d+)", out)
    return f"V{m.group(1)}" if m else ""


@functools.cache
def _installed() -> tuple[tuple[str, str], ...]:
    """Every ptxas found (the device's 13.0 first, then Triton's own, ``ptxas-blackwell`` 13.4,
    which reads Triton 3.9's PTX ISA 9.4), with its version."""
    found = [(str(p), _version(p)) for p in _candidates("ptxas") + _candidates("ptxas-blackwell")]
    return tuple((p, v) for p, v in dict(found).items() if v)


@functools.cache
def tools(isa: tuple[int, int] = (0, 0)) -> Tools | None:
    """ptxas and nvdisasm for PTX of ISA ``isa`` (``(9, 4)``), or ``None`` where none installed reads
    it: the first ptxas that reads it (CUDA 13.x reads ISA 9.x up to x), the newest nvdisasm of its
    major version."""
    for ptxas, pv in _installed():
        major, minor = _major_minor(pv)
        if major < 13 or (major - 4, minor) < isa:
            continue
        disasm = sorted(((_version(d), str(d)) for d in _candidates("nvdisasm")), reverse=True)
        for dv, dis in disasm:  # the newest of the same major version (13.2 reads 13.4's cubins here)
            if dv and _major_minor(dv)[0] == major:
                return Tools(ptxas, dis, pv, dv)
    return None


def ptx_isa(ptx: str) -> tuple[int, int]:
    """The ``.version`` of a PTX module (``(0, 0)`` where it names none)."""
    m = re.search(r"^\s*\.version\s+(\d+)\.(\d+)", ptx, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _major_minor(v: str) -> tuple[int, int]:
    a, b, *_ = (int(x) for x in v[1:].split("."))
    return a, b


def _is_instruction(s: str) -> bool:
    return bool(s) and not s.startswith((".", "//", "{", "}", ")", "(")) and not re.match(r"^[\w$]+:", s)


def with_ptx_lines(ptx: str) -> str:
    """``ptx`` with its own ``.file``/``.loc`` lines blanked, its debug sections dropped, and a
    ``.loc 1 N 0`` before each instruction of line N (inside function bodies): ptxas's line table
    then names PTX lines."""
    out: list[str] = []
    depth = 0
    skipping = inside = False
    for n, line in enumerate(ptx.split("\n"), 1):
        s = line.strip()
        if not skipping and depth == 0 and s.startswith(".section") and ".debug" in s:
            skipping = True
        if skipping:
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                skipping, depth = False, 0
            out.append("")
            continue
        if re.match(r"\.(?:loc|file)\s", s):  # not .local
            out.append("")
            continue
        code = s.split("//", 1)[0].strip()
        if depth > 0 and _is_instruction(code) and not inside:
            out.append(f".loc 1 {n} 0")
        if depth > 0 and code and (inside or _is_instruction(code)):
            inside = not code.endswith(";")  # a statement may run over lines (a call's operands)
        out.append(line)
        depth += code.count("{") - code.count("}")
    out.append(f'.file 1 "{LINE_FILE}"')
    return "\n".join(out)


def ptxas_arch(arch: str, ptx: str) -> str:
    """The ``-arch`` ptxas builds for: the tool's arch (``sm90``), with the ``a`` suffix where the
    PTX targets it (wgmma, setmaxnreg) or where sm90 code would not build without it."""
    num = re.sub(r"\D", "", arch)
    target = re.search(r"^\s*\.target\s+([\w,\s]+)", ptx, re.M)
    want = f"sm_{num}a" if target and f"sm_{num}a" in target.group(1) else f"sm_{num}"
    return want


def _limit_memory() -> None:  # in the child, before exec
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = _MEMORY if hard == resource.RLIM_INFINITY else min(_MEMORY, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _run(argv: list[str], cwd: str, seconds: float) -> subprocess.CompletedProcess:
    if seconds <= 0:
        raise TimeLimit("kernel: no time was left to build the SASS (ptxas)")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C"}
    try:
        return subprocess.run(
            argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=seconds,
            preexec_fn=_limit_memory, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        raise TimeLimit(f"kernel: {Path(argv[0]).name} did not finish within {seconds:.0f} s") from None


@dataclass(frozen=True)
class Disassembly:
    """A module's SASS (every text section), or why there is none (``error``)."""

    tools: Tools
    arch: str
    ops: tuple[SassOp, ...]
    error: str = ""


def disassemble(ptx: str, arch: str, seconds: float = 120.0) -> Disassembly | None:
    """The SASS of ``ptx`` built for ``arch`` (``None``: the tools are not installed). A module
    ptxas refuses gives a :class:`Disassembly` with its ``error`` (its first lines)."""
    t = tools(ptx_isa(ptx))
    if t is None:
        return None
    import time

    start = time.monotonic()
    target = ptxas_arch(arch, ptx)
    with tempfile.TemporaryDirectory(prefix="bankproof-sass-") as d:
        Path(d, "k.ptx").write_text(with_ptx_lines(ptx))
        r = _run([t.ptxas, f"-arch={target}", "-lineinfo", "k.ptx", "-o", "k.cubin"], d, seconds)
        if r.returncode != 0:
            err = " ".join((r.stderr or r.stdout).split("\n")[:3]).strip()
            return Disassembly(t, target, (), f"ptxas refused the PTX: {err[:300]}")
        left = seconds - (time.monotonic() - start)
        r = _run([t.nvdisasm, "-g", "-c", "k.cubin"], d, left)
        if r.returncode != 0:
            return Disassembly(t, target, (), f"nvdisasm failed (exit {r.returncode})")
        return Disassembly(t, target, tuple(parse(r.stdout)))


@functools.lru_cache(maxsize=16)
def _cached(ptx: str, arch: str) -> Disassembly | None:
    return disassemble(ptx, arch, _cached.seconds)  # type: ignore[attr-defined]


def disassemble_cached(ptx: str, arch: str, seconds: float) -> Disassembly | None:
    """:func:`disassemble`, remembered for the last few modules of this process (a time-out is
    not remembered)."""
    _cached.seconds = seconds  # type: ignore[attr-defined]
    return _cached(ptx, arch)


_FUNC = re.compile(r"^\s*\.text\.([\w$.]+):")
_LINE = re.compile(r'//## File "([^"]*)", line (\d+)')
_INS = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)\s*([^;]*);")


def parse(text: str) -> list[SassOp]:
    """The instructions of nvdisasm's ``-g -c`` listing, each with the PTX line in force.

    >>> parse('''.text.k:
    ...   //## File "ptx", line 7
    ...   /*0010*/  @!PT LDS RZ, [RZ] ;
    ...   /*0020*/  LDS.128 R4, [R2+0x10] ;''')[1]
    SassOp(function='k', pc=32, line=7, guard='', opcode='LDS.128', operands='R4, [R2+0x10]')
    """
    out, fn, line = [], "", 0
    for raw in text.split("\n"):
        m = _FUNC.match(raw)
        if m:
            fn, line = m.group(1), 0
            continue
        m = _LINE.search(raw)
        if m:
            line = int(m.group(2)) if m.group(1) == LINE_FILE else 0
            continue
        m = _INS.match(raw)
        if m:
            guard = (m.group(2) or "").strip()
            out.append(SassOp(fn, int(m.group(1), 16), line, guard, m.group(3), m.group(4).strip()))
    return out


# SASS opcodes (their first word) by what they do to shared memory. Counted by reconciliation with
# the PTX (sass_kind); run by another engine whose LSU wavefronts are measured as none (TMA copies,
# wgmma operand reads, mbarrier arrivals: gpu_checks/results/h100-2026-11-27-engines.json.gz,
# h200-2026-11-26-op-misc.json); and those that cannot touch shared memory (arithmetic, control,
# global, local and constant memory). A kernel whose SASS runs an opcode in none of them is unknown.
SASS_RECONCILED = frozenset({"LDS", "STS", "LDSM", "STSM", "LDGSTS", "ATOMS", "LD", "ST", "ATOM"})
SASS_ENGINES = frozenset({"UTMALDG", "UTMASTG", "UTMAPF", "UBLKCP", "SYNCS", "HGMMA", "IGMMA", "QGMMA",
                          "WARPGROUP", "LDGDEPBAR", "DEPBAR", "ARRIVES", "UTMACCTL",
                          "UTMACMDFLUSH"})  # fmt: skip
# ordering and exchange on the shared pipe without shared-memory data: Nsight Compute counts their
# wavefronts under op_misc (fences, shuffles: h200-2026-11-26-op-misc.json), never under the load,
# store, ldsm, stsm or ldgsts counters bankproof states
SASS_MISC = frozenset({"FENCE", "MEMBAR", "SHFL", "CGAERRBAR", "ERRBAR"})
SASS_NO_SHARED = frozenset((
    "ATOMG", "BAR", "BMOV", "BPT", "BRA", "BREAK", "BREV", "BSSY", "BSYNC", "CALL", "CCTL",
    "CS2R", "DADD", "DFMA", "DMUL", "DSETP", "ELECT", "ENDCOLLECTIVE", "EXIT", "F2F", "F2FP",
    "F2I", "FADD", "FCHK", "FFMA", "FLO", "FMNMX", "FMUL", "FRND", "FSEL", "FSET", "FSETP", "HADD2",
    "HFMA2", "HMMA", "HMNMX2", "HMUL2", "HSET2", "HSETP2", "I2F", "I2FP", "I2I", "IABS", "IADD",
    "IADD3", "IDP", "IMAD", "IMMA", "IMNMX", "IMUL", "ISCADD", "ISETP", "JMP", "KILL", "LDC", "LDG",
    "LDL", "LEA", "LEPC", "LOP", "LOP3", "MATCH", "MOV", "MOVM", "MUFU", "NANOSLEEP", "NOP",
    "P2R", "PLOP3", "POPC", "PRMT", "R2P", "R2UR", "RED", "REDG", "REDUX", "RET", "S2R", "S2UR", "SEL",
    "SGXT", "SHF", "SHL", "SHR", "STG", "STL", "UBMSK", "UBREV", "UCLEA", "UFLO", "UI2F",
    "UIADD3", "UIMAD", "UIMNMX", "UISETP", "ULDC", "ULEA", "ULOP", "ULOP3", "UMOV", "UP2UR", "UPLOP3",
    "UPOPC", "UPRMT", "USEL", "USETMAXREG", "USGXT", "USHF", "USHL", "USHR", "UVOTE", "VABSDIFF",
    "VIADD", "VIADDMNMX", "VIMNMX", "VIMNMX3", "VHMNMX", "VOTE", "VOTEU", "WARPSYNC", "YIELD",
))  # fmt: skip


def sass_known(opcode: str) -> bool:
    """Whether bankproof knows what a SASS opcode does to shared memory (one of the three sets)."""
    base = opcode.split(".", 1)[0]
    return base in SASS_RECONCILED or base in SASS_ENGINES or base in SASS_MISC or base in SASS_NO_SHARED


_WIDTH = {"U8": 8, "S8": 8, "U16": 16, "S16": 16, "64": 64, "128": 128}


def sass_kind(opcode: str) -> tuple[str, str] | None:
    """A SASS shared-memory opcode in the PTX side's terms (``(family, name)``), else ``None``:
    LDS/STS as ``ld``/``st`` and their bits, LDSM/STSM as ``ldsm``/``stsm`` ``.xN[.trans]``,
    LDGSTS as ``cpN`` (bytes), ATOMS as ``atomic``; generic LD/ST (which may be shared) as ``generic``."""
    parts = opcode.split(".")
    base, mods = parts[0], parts[1:]
    bits = next((_WIDTH[m] for m in mods if m in _WIDTH), 32)
    if base in ("LDS", "STS"):
        return "lsu", f"{base[:2].lower()}{bits}"
    if base in ("LDSM", "STSM"):
        n = next((m for m in reversed(mods) if m in ("1", "2", "4")), "1")
        trans = ".trans" if any(m.startswith("MT") for m in mods) else ""
        return "lsu", f"{base[:2].lower()}sm.x{n}{trans}"
    if base == "LDGSTS":
        return "ldgsts", f"cp{bits // 8}"
    if base == "ATOMS":
        return "atomic", opcode
    if base in ("LD", "ST"):
        return "generic", f"{base.lower()}{bits}"
    if base == "ATOM":  # a generic atomic: shared or global, as its address is
        return "generic", "atom"
    return None
