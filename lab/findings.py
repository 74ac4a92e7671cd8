"""The generated findings documents (``docs/explanation/triton-findings.md`` and ``docs/explanation/triton-findings-amd.md``)
from the corpus's entries: a docs generator, kept beside the package, not in it. The tests compare
each document with what the corpus produces now, so the documents cannot go stale.

    python -c "from lab.findings import write; write()"   # regenerate both (needs the triton extra)
"""

from __future__ import annotations

import json
from pathlib import Path

from bankproof.models import target
from bankproof.verifier.results import plain
from bankproof.verifier.triton.corpus import ALL_ARCHS

ROOT = Path(__file__).resolve().parent.parent

AMD_READING = [
    "## Reading it (AMD)",
    "",
    "- Counts come from the published LDS lane groups of `models/lds.py`, rules in `models/target.py` (status `assumed (published)`; "
    "no AMD GPU measured them): a group costs the most distinct words one bank is asked for; the ideal "
    "is one cycle per group. An access whose instruction has no published grouping, or moves less than "
    "a dword per lane, is not counted (listed by `bankproof triton corpus` as unchecked).",
    "- The optimum search and the whole-kernel ledger (which reads PTX) are NVIDIA-only so far, so no "
    "optimum is given and the ledger lines above are empty.",
]


GPU_EXAMPLE = "examples/triton_tf32_b_operand_sm90.toml"


def _gpu_line() -> str:
    """The recorded GPU run of the tf32 B-operand write (the corpus's largest conflict)."""
    from bankproof.gpu_checks.results import RESULTS

    for path in sorted(RESULTS.glob("*-layouts.json")):
        data = json.loads(path.read_text())
        for run in data["runs"]:
            if run["id"] == GPU_EXAMPLE:
                m, p = run["measured"], run["predicted"]
                return (
                    f"- On the GPU ({data['gpu']}, `{path.name}`): `{GPU_EXAMPLE}` writes the tf32 B tile "
                    f"with st.shared.b32 into the same transposed 128-byte buffer: {m['store']} wavefronts "
                    f"measured, {p['store']} predicted, data correct ({run['data_mismatches']} mismatches). "
                    "Triton writes it with 4-byte `cp.async.ca`, which costs exactly its store when the "
                    "warp's global reads are coalesced (176 of 176 probes, `h100-2026-11-22-cp-async.json`)."
                )
    return "- No GPU measurement of these rows is recorded."


def _kinds(compiled: list[dict]) -> str:
    kinds: dict[str, int] = {}
    for e in compiled:
        for x in e.get("ledger", {}).get("entries", []):
            kinds[x["kind"]] = kinds.get(x["kind"], 0) + len(x["ptx_lines"])
    return ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))


def _whole_kernels(compiled: list[dict], top: int = 25) -> list[str]:
    """The ledger per kernel, one pass (every counted instruction once, one iteration of each
    loop): total shared wavefronts against the ideal, and the Triton choices that cost the most
    over the corpus (excess = wavefronts - ideal, summed by op, instruction and kind)."""
    rows, choices = [], {}
    for e in compiled:
        counted = [x for x in e.get("ledger", {}).get("entries", []) if x.get("wavefronts") is not None]
        if not counted:
            continue
        wf, ideal = sum(x["wavefronts"] for x in counted), sum(x["ideal"] for x in counted)
        worst = max(counted, key=lambda x: x["wavefronts"] - x["ideal"])
        rows.append((wf - ideal, e["config"], e["arch"], wf, ideal, worst))
        for x in counted:
            if x["wavefronts"] > x["ideal"]:
                c = choices.setdefault((x["op"], x["instr"], x["kind"]), [0, set()])
                c[0] += x["wavefronts"] - x["ideal"]
                c[1].add(e["config"])
    rows.sort(key=lambda r: (-r[0], r[1], r[2]))
    lines = [
        "## Whole kernels (the ledger)",
        "",
        "Every PTX shared-memory instruction of each kernel, counted once (one pass: one iteration of "
        "each loop; the JSON output gives executions and loop trips). Ideal = one wavefront per phase "
        f"for the instruction Triton emitted. {sum(1 for r in rows if r[0] == 0)} of {len(rows)} kernels "
        f"are at the ideal everywhere; the others, furthest first (at most {top}):",
        "",
        "| kernel | arch | wavefronts | ideal | excess | costliest entry |",
        "|---|---|---|---|---|---|",
    ]
    for gap, config, arch, wf, ideal, w in [r for r in rows if r[0]][:top]:
        lines.append(f"| {config} | {arch} | {wf} | {ideal} | {gap} | {w['location']} {w['op']} {w['kind']} "
                     f"{w['instr']}: {w['wavefronts']} ({w['ideal']}) |")  # fmt: skip
    lines += ["", "Triton choices that cost the most, over the corpus:", "",
              "| op | instruction | kind | excess wavefronts | kernels |",
              "|---|---|---|---|---|"]  # fmt: skip
    for (op, instr, kind), (gap, names) in sorted(choices.items(), key=lambda c: (-c[1][0], c[0]))[:top]:
        lines.append(f"| {op} | {instr} | {kind} | {gap} | {len(names)} |")
    return lines + [""]


def findings_markdown(entries: list[dict], checked_by: str = "tests/test_triton_corpus.py") -> str:
    """``docs/explanation/triton-findings.md``: every corpus buffer whose chosen layout costs more than the
    optimum, and every access above its ideal (with whether the optimum is reachable)."""
    import triton

    entries = plain(list(entries))  # the entries' JSON form (records as their to_dict())
    archs = [a for a in ALL_ARCHS if any(e["arch"] == a for e in entries)]
    compiled = [e for e in entries if "report" in e]
    buffers = [(e, b) for e in compiled for b in e["report"]["buffers"]]
    above = [(e, b) for e, b in buffers if b["gap"]]
    conflicted = [
        (e, b, a)
        for e, b in buffers
        for a in b["accesses"]
        if (a.get("wavefronts") or 0) > (a.get("ideal") or 0)
    ]
    unknown = [(e, b) for e, b in buffers if b["gap"] is None]
    same = sum(1 for _, b in above if b.get("optimal_same_instructions", b["optimal_wavefronts"]) is not None
               and b.get("optimal_same_instructions", b["optimal_wavefronts"]) < b["wavefronts"])  # fmt: skip
    lines = [
        "# Triton's shared-memory layouts, checked",
        "",
        f"Generated by `bankproof triton corpus --arch {','.join(archs)}` (Triton {triton.__version__}, "
        f"TTGIR compiled on the CPU) and checked by `{checked_by}`: edit the corpus, "
        "not this file.",
        "",
        f"- {len(compiled)} (configuration, arch) pairs compiled of {len(entries)}; "
        f"{len(buffers)} shared buffers; {sum(len(b['accesses']) for _, b in buffers)} accesses.",
        f"- Buffers above the optimum bankproof can reach by changing only the shared layout: {same}.",
        f"- Buffers above the optimum over shared layouts and instructions (searched vectors and "
        f"instructions, each op's legal ones): {len(above)}.",
        f"- Accesses above their ideal (one wavefront per phase): {len(conflicted)}.",
        f"- Buffers whose optimum bankproof cannot yet compute: {len(unknown)}.",
        f"- Kernels whose every PTX shared-memory instruction is owned by a ledger entry, counted alike "
        f"by the scan and the PTX's addresses where both count it (`verifier/triton/ledger.py`): "
        f"{sum(1 for e in compiled if not e.get('lowering'))} of {len(compiled)}.",
        f"- Ledger, PTX shared-memory instructions by kind over all kernels: {_kinds(compiled)}.",
        "",
        "## Buffers above the optimum",
        "",
    ]
    if not above:
        lines.append("None: wherever bankproof can compute the optimum, Triton's layout reaches it.")
    else:
        lines += [
            "| kernel | arch | buffer | chosen (instructions) | optimal (instructions) | better layout |",
            "|---|---|---|---|---|---|",
        ]
        for e, b in above:
            mine = ", ".join(dict.fromkeys(a.get("instr", "?") for a in b["accesses"]))
            theirs = ", ".join(dict.fromkeys(b.get("better_instructions", []))) or mine
            where = f"{e['config']} | {e['arch']} | {b['buffer']} {b['dtype']} {b['shared']}"
            lines.append(
                f"| {where} | {b['wavefronts']} ({mine}) | {b['optimal_wavefronts']} ({theirs}) | "
                f"`{b.get('better_layout', '')}` |"
            )
    lines += [
        "",
        "## Accesses above their ideal",
        "",
        "| kernel | arch | buffer | access | wavefronts (ideal) | buffer optimum | why |",
        "|---|---|---|---|---|---|---|",
    ]
    for e, b, a in conflicted:
        opt = b["optimal_wavefronts"] if b["optimal_wavefronts"] is not None else "unknown"
        lines.append(
            f"| {e['config']} | {e['arch']} | {b['buffer']} {'x'.join(map(str, b['shape']))} {b['dtype']} | "
            f"line {a['location']['ttgir_line']} {a['op']} {a['instr']} | {a['wavefronts']} ({a['ideal']}) | "
            f"{opt} (chosen {b['wavefronts']}) | {b.get('reason', '')} |"
        )
    if all("ledger" not in target.get(e["arch"]).commands for e in entries):  # published models only
        return "\n".join([*lines, "", *AMD_READING, ""])
    lines += ["", *_whole_kernels(compiled)]
    lines += [
        "## Reading it",
        "",
        "- `wavefronts (ideal)`: the exact count under the measured Hopper model (`models/hardware.py`) "
        "with the instruction Triton's PTX uses (checked per source line: `ldmatrix.x4` for dot operands "
        "where it can deliver them, else the widest legal ld/st vector). `cp.async` "
        "(`async_copy_global_to_local`) is counted as a shared store of the same width: measured exact "
        "for Triton's 4- and 8-byte `cp.async.ca` with coalesced global reads; its 16-byte `cp.async.cg` "
        "shows no shared wavefronts to Nsight Compute (timed, it is fastest conflict-free), so there the "
        "count is assumed.",
        "- Hardware: the bank model was measured on Hopper (H200, H100); sm80 and sm100 rows assume "
        "Ampere and Blackwell shared memory behaves the same (`status: assumed` in `bankproof wavefronts`).",
        "- `write-only nvmma_shared`: the buffer is read by wgmma or tcgen05.mma, which bankproof does "
        "not model, so its shared layout can only move within `nvmma_shared`; the optimum is the cheapest "
        "`swizzlingByteWidth` for its writers. Where it equals the chosen cost, the conflicts come from "
        "the writer's distributed layout (e.g. `sizePerThread = [1, 4]` along N into a "
        "`transposed = true` buffer, so each lane writes one element per instruction), not from the "
        "swizzle Triton picked.",
        _gpu_line(),
        "",
    ]
    return "\n".join(lines)


def write() -> None:
    """Compile the corpus (NVIDIA archs, then the lane-group archs) and rewrite both documents."""
    from bankproof.verifier.triton import corpus

    phases = [a for a in ALL_ARCHS if target.get(a).model == "phases"]
    groups = [a for a in ALL_ARCHS if target.get(a).model == "lane groups"]
    for archs, name, test in (
        (phases, "triton-findings.md", "tests/test_triton_corpus.py"),
        (groups, "triton-findings-amd.md", "tests/test_triton_corpus_amd.py"),
    ):
        entries = corpus.run_corpus(corpus.builtin_configs(), archs)
        (ROOT / "docs" / "explanation" / name).write_text(findings_markdown(entries, test))
