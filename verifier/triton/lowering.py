"""Check the scan's instruction policy against Triton's own lowering: count the shared-memory
instructions in the PTX Triton emits (static, per thread, so per warp) and compare them with the
instructions the scan counted each access with.

The scan claims, per access, which instruction moves the data (``ldsm.x4.trans``, ``st128``,
...) and how many a warp issues. Layout conversions and reductions also use shared memory (with
``ld``/``st`` and, on Triton 3.9, ``ldmatrix``/``stmatrix`` too), so the comparison is made per
Python source line, from the PTX's ``.loc`` directives: see :func:`compare`.

>>> ptx = '''
...   @%p1 cp.async.cg.shared.global [ %r1 + 0 ], [ %rd1 + 0 ], 0x10, %r2;
...   ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%r3, %r4, %r5, %r6}, [%r7];
...   st.shared.v2.b32 [%r8], {%r9, %r10};
...   ld.shared.s8 %rs1, [%r11];
... '''
>>> sorted(ptx_counts(ptx).items())
[('cp16', 1), ('ld8', 1), ('ldsm.x4.trans', 1), ('st64', 1)]
>>> ptx_cp_async_modes(ptx)
{16: ['cg']}
"""

from __future__ import annotations

import re
from collections import Counter

from bankproof.verifier.triton.ptx.parse import Kernel, classify

_PRED = r"^\s*(?:@!?%\w+\s+)?"
_LDST = re.compile(_PRED + r"(ld|st)(?:\.volatile)?\.shared(?:::cta)?(?:\.v(\d))?\.[bsuf](\d+)\s", re.M)
_MATRIX = re.compile(_PRED + r"(ldmatrix|stmatrix)\.sync\.aligned\.m8n8\.x(\d)(\.trans)?\.shared", re.M)
_OPERAND = r"\s*\[[^\]]*\],"
_SIZE = r"\s*(0x[0-9a-fA-F]+|\d+)"
_CP = re.compile(_PRED + r"cp\.async\.(c[ag])\.shared\.global" + _OPERAND * 2 + _SIZE, re.M)


def ptx_counts(ptx: str) -> dict[str, int]:
    """Static count of each shared-memory instruction in PTX, named as the scan names them:
    ``ld32``, ``st128``, ``ldsm.x4.trans``, ``stsm.x2``, and ``cp16`` for a 16-byte cp.async."""
    out: Counter = Counter()
    for op, vec, bits in _LDST.findall(ptx):
        out[f"{op}{int(vec or 1) * int(bits)}"] += 1
    for op, m, trans in _MATRIX.findall(ptx):
        out[f"{'ldsm' if op == 'ldmatrix' else 'stsm'}.x{m}{trans}"] += 1
    for _, size in _CP.findall(ptx):
        out[f"cp{int(size, 0)}"] += 1
    return dict(out)


def kernel_counts(kernel: Kernel) -> tuple[dict[str, int], dict[int, list[str]]]:
    """:func:`ptx_counts` and :func:`ptx_cp_async_modes` of a kernel already read (the compile's one
    parse: each instruction as the PTX reader classified it, no second look at the text)."""
    counts: Counter = Counter()
    modes: dict[int, set[str]] = {}
    for ins in kernel.body:
        c = classify(ins)
        if c is None or c[0] not in ("lsu", "ldsm", "stsm", "ldgsts"):
            continue
        name = c[1]
        if name.startswith("cp"):  # cp16.cg: the copy's size and its cache mode
            name, _, mode = name.partition(".")
            modes.setdefault(int(name[2:]), set()).add(mode)
        counts[name] += 1
    return dict(counts), {k: sorted(v) for k, v in sorted(modes.items())}


def ptx_cp_async_modes(ptx: str) -> dict[int, list[str]]:
    """The cache modes (``ca``/``cg``) Triton used for cp.async, per copy size in bytes."""
    modes: dict[int, set[str]] = {}
    for mode, size in _CP.findall(ptx):
        modes.setdefault(int(size, 0), set()).add(mode)
    return {k: sorted(v) for k, v in sorted(modes.items())}


_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', re.M)
Location = tuple[str, int, int]  # (source file name, line, column)


def ptx_counts_by_location(ptx: str) -> dict[Location, dict[str, int]]:
    """:func:`ptx_counts` per Python source location, from the ``.file``/``.loc`` directives
    Triton writes into its PTX."""
    files = {n: path.rsplit("/", 1)[-1] for n, path in _FILE.findall(ptx)}  # listed after the code
    out: dict[Location, Counter] = {}
    where: Location = ("", 0, 0)
    for line in ptx.splitlines():
        s = line.strip()
        if s.startswith(".loc"):  # .loc FILE LINE COL [, function_name ..., inlined_at ...]
            f, ln, col = s.replace(",", " ").split()[1:4]
            where = (files.get(f, f), int(ln), int(col))
        elif s and not s.startswith((".", "//")):
            for k, v in ptx_counts(line).items():
                out.setdefault(where, Counter())[k] += v
    return {k: dict(v) for k, v in out.items()}


def access_instr(access: dict) -> str:
    """A scan access's instruction as the PTX names it: ``ld64`` for a b64 load, ``cp16`` for a
    16-byte ``async_copy_global_to_local``."""
    name = access["instr"].replace("64b", "64")
    if access["op"] == "ttg.async_copy_global_to_local":
        name = f"cp{int(name[2:]) // 8}"
    return name


def _where(location: dict | None) -> Location:
    if not location or "line" not in location:
        return ("", 0, 0)
    return (str(location.get("source", "")).rsplit("/", 1)[-1], location["line"], location.get("column", 0))


def scan_counts_by_location(report: dict) -> tuple[dict[Location, dict[str, int]], set[Location]]:
    """Per-warp instruction counts the scan used, per source location, and the locations where
    some access could not be analysed."""
    out: dict[Location, Counter] = {}
    partial: set[Location] = set()
    for b in report["buffers"]:
        for a in b["accesses"]:
            where = _where(a.get("location"))
            if "instr" not in a:
                partial.add(where)
                continue
            out.setdefault(where, Counter())[access_instr(a)] += a["instructions"] // report["num_warps"]
    return {k: dict(v) for k, v in out.items()}, partial


def compare(report: dict, ptx: str) -> list[str]:
    """Disagreements between the scan's instructions and the PTX, per source location of the
    scan's accesses: equal counts of every shared-memory instruction, except where a layout
    conversion shares the location (its instructions add to the PTX's) or an access was not
    analysed (then the scan's counts must fit within the PTX's). Instructions LLVM attributed to
    another line (a location with none of the scan's accesses or conversions) may make up what a
    location lacks, never what it has too much of."""
    return _match(report, ptx)[0]


def unattributed(report: dict, ptx: str) -> list[str]:
    r"""The PTX's shared-memory instructions that no access of the scan and no layout conversion
    accounts for, per source location (scratch of reductions, scans, histograms...; TMA and
    wgmma traffic is not in these instruction counts): ``"norm.py:12:5: {'st32': 2}"``.

    >>> ptx = '.loc 1 7 3\n st.shared.b32 [%r1], %r2;\n.loc 1 9 1\n ld.shared.b32 %r3, [%r4];\n.file 1 "k.py"'
    >>> unattributed({"buffers": [], "conversions": [], "num_warps": 1}, ptx)
    ["k.py:7:3: {'st32': 1}", "k.py:9:1: {'ld32': 1}"]
    """
    return _match(report, ptx)[1]


def _match(report: dict, ptx: str) -> tuple[list[str], list[str]]:
    mine, partial = scan_counts_by_location(report)
    theirs = ptx_counts_by_location(ptx)
    conversions = {_where(c.get("location")) for c in report.get("conversions", [])}
    # PTX instructions at locations the scan knows nothing about, by location
    loose = {w: Counter(c) for w, c in theirs.items() if w not in mine and w not in conversions}
    problems = []
    for where, counts in sorted(mine.items()):
        ptx_here = theirs.get(where, {})
        at = f"{where[0]}:{where[1]}:{where[2]}"
        if where in partial or where in conversions:
            over = {k: v for k, v in counts.items() if v > ptx_here.get(k, 0)}
            if over:
                problems.append(f"{at}: scan {counts} exceeds PTX {ptx_here}")
            continue
        missing = Counter({k: v - ptx_here.get(k, 0) for k, v in counts.items() if v > ptx_here.get(k, 0)})
        extra = any(v > counts.get(k, 0) for k, v in ptx_here.items())
        if missing and not extra and all(sum(c[k] for c in loose.values()) >= v for k, v in missing.items()):
            for k, v in missing.items():  # emitted under another line: take them from there, in order
                for w in sorted(loose):
                    take = min(v, loose[w][k])
                    loose[w][k] -= take
                    v -= take
        elif missing or extra:
            problems.append(f"{at}: scan {counts}, PTX {ptx_here}")
    left = []
    for w in sorted(loose):
        rest = {k: v for k, v in sorted(loose[w].items()) if v > 0}
        if rest:
            left.append(f"{w[0]}:{w[1]}:{w[2]}: {rest}")
    return problems, left
