"""Scan TTGIR: every shared buffer, every access to it, its exact wavefronts, the optimum for the
buffer's writers and readers together, and a better layout when there is one.

Instruction policy (what each access is counted with): ``local_load`` into a ``dot_op`` uses
``ldmatrix.x4`` when it can deliver the layout (16-bit: ``.trans`` tried first for operand B,
plain first for operand A; 8- and 32-bit: plain), as Triton 3.9's lowering does (checked against
its PTX, ``verifier/triton/lowering.py``); every other access uses the widest ld/st vector legal
on every lane (``auto``). ``async_copy_global_to_local`` is counted as a store of the same width. Measured
(``models.hardware.ldgsts_wavefronts``): Triton's 4- and 8-byte copies (``cp.async.ca``) cost
exactly their store when the warp's global reads touch no more 128-byte lines than that, as
coalesced copies do; its 16-byte copies (``cp.async.cg``, LDGSTS.BYPASS) have no shared
wavefronts Nsight Compute can count, so their store count is an assumption (``hardware``).

>>> text = open(__file__.replace("scan.py", "sample.ttgir")).read()
>>> rep = scan_text(text, "sample.ttgir")
>>> [(a["op"], a["wavefronts"], a["ideal"]) for a in rep["buffers"][0]["accesses"]]
[('ttg.local_alloc', 16, 16), ('ttg.local_load', 256, 16)]
>>> rep["buffers"][0]["optimal_wavefronts"], rep["buffers"][0]["gap"]
(32, 240)
"""

from __future__ import annotations

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.notation import triton_memory_text
from bankproof.verifier.triton.accesses import (
    buffer_accesses,
    copy_elements,
    copy_lines,
    count_access,
    instr_candidates,
    layouts_of,
    location,
    parse_cached,
    provenance,
    resolved,
    sm_of,
)
from bankproof.verifier.triton.optimum import nvmma_family, same_instructions, searched
from bankproof.verifier.triton.plans import cheapest_plan
from bankproof.verifier.triton.ttgir import Module, Op, read_ttgir


def scan_module(mod: Module, path: str = "<ttgir>") -> dict:
    """The scan report of one module (see the module docstring)."""
    accesses = buffer_accesses(mod)
    try:
        t = target.from_triton(mod.target)
    except InputError as e:  # not counted with another arch's model: every access unchecked
        return _unmodeled(mod, accesses, path, str(e))
    sm = sm_of(mod.target)
    out_buffers = []
    for buf in dict.fromkeys(a.buffer for a in accesses):
        accs = [a for a in accesses if a.buffer == buf]
        rows, problems = [], []
        parsed = []
        for a in accs:
            bits = a.memdesc.elem_bits
            row = _row(a, path)
            try:
                if bits is None:
                    raise InputError("ttgir", "element type", "is not supported", a.memdesc.elem)
                dist, memory = layouts_of(mod, a)
                row.update(
                    count_access(
                        dist,
                        memory,
                        bits,
                        a.kind,
                        instr_candidates(a, bits, sm, resolved(mod, a.tensor.encoding), t, dist),
                        t,
                        a.op.name == "ttg.async_copy_global_to_local",
                    )
                )
                if "error" in row:
                    raise InputError("ttgir", "access", row.pop("error"))
                if a.op.name == "ttg.async_copy_global_to_local" and t.matrix:
                    _copy_width(row, a, resolved(mod, a.tensor.encoding), dist, bits)
                # what the count rests on: the target's own status (provenance refines a measured one)
                status = provenance(a.op.name, row["instr"]) if t.status == "measured" else t.status
                row.setdefault("hardware", status)
                parsed.append((a, dist, bits))
            except (InputError, ValueError) as e:
                row["error"] = str(e)
                problems.append(str(e))
            rows.append(row)
        entry = _buffer(buf, accs, rows)
        if "optimum" not in t.commands:
            reason = t.not_modeled("optimum")
            entry.update({"optimal_wavefronts": None, "gap": None, "reason": reason})
            out_buffers.append(entry)
            continue
        entry.update(same_instructions(parsed, rows))
        if len(parsed) == len(rows) and "nvmma" not in resolved(mod, accs[0].memdesc.encoding):
            entry.update(searched(parsed, entry, sm) or {})
        if entry["gap"] is None and rows and all(r["kind"] == "store" and "instr" in r for r in rows):
            entry.update(nvmma_family(mod, accs, rows) or {})
        out_buffers.append(entry)
    cvts = [op for op in mod.ops if op.name == "ttg.convert_layout"] if "optimum" in t.commands else []
    conversions = [_conversion(mod, op, path) for op in cvts]
    return {"file": path, "target": mod.target, "num_warps": mod.num_warps, "buffers": out_buffers,
            "conversions": conversions}  # fmt: skip


def _row(a, path: str) -> dict:
    """What every access row says, counted or not."""
    return {"op": a.op.name, "kind": a.kind, "location": location(a.op, path),
            "layout": a.tensor.encoding, "shared": a.memdesc.encoding, "shape": list(a.memdesc.shape),
            "dtype": a.memdesc.elem}  # fmt: skip


def _buffer(buf: str, accs: list, rows: list[dict]) -> dict:
    return {"buffer": buf, "shape": list(accs[0].memdesc.shape), "dtype": accs[0].memdesc.elem,
            "shared": accs[0].memdesc.encoding, "accesses": rows,
            "wavefronts": sum(r.get("wavefronts", 0) for r in rows)}  # fmt: skip


def _unmodeled(mod: Module, accesses: list, path: str, why: str) -> dict:
    """The report of a module whose target has no model: every access and conversion listed as
    not analysed (``why``), so a gate exits 3 instead of passing on another arch's counts."""
    buffers = []
    for buf in dict.fromkeys(a.buffer for a in accesses):
        accs = [a for a in accesses if a.buffer == buf]
        rows = [{**_row(a, path), "error": why} for a in accs]
        buffers.append({**_buffer(buf, accs, rows), "optimal_wavefronts": None, "gap": None, "reason": why})
    cvts = [{"op": op.name, "location": location(op, path), "error": why}
            for op in mod.ops if op.name == "ttg.convert_layout"]  # fmt: skip
    return {"file": path, "target": mod.target, "num_warps": mod.num_warps, "buffers": buffers,
            "conversions": cvts}  # fmt: skip


def _conversion(mod: Module, op: Op, path: str) -> dict:
    row = {"op": op.name, "location": location(op, path)}
    tensors = [t for t in op.types if t.kind == "tensor"]
    if len(tensors) != 2 or tensors[0].elem_bits is None:
        return {**row, "error": "types not understood"}
    src, dst = tensors
    row.update({"from": src.encoding, "to": dst.encoding, "shape": list(src.shape), "dtype": src.elem})
    try:
        a = parse_cached(mod.expand(src.encoding), tuple(src.shape))
        b = parse_cached(mod.expand(dst.encoding), tuple(dst.shape))
        op_kind = [(op.name, "store", a, src.elem_bits), (op.name, "load", b, src.elem_bits)]
        best = cheapest_plan(op_kind, a, b, src.elem_bits, sm_of(mod.target))
    except (InputError, ValueError) as e:
        return {**row, "error": str(e)}
    if best is None:
        return {**row, "error": "no searched layout carries both sides"}
    total, memory, instrs = best
    st = count_access(a, memory, src.elem_bits, "store", [instrs[0]])
    ld = count_access(b, memory, src.elem_bits, "load", [instrs[1]])
    row["shared_plan"] = {
        "layout": triton_memory_text(memory),
        "store": st,
        "load": ld,
        "wavefronts": st["wavefronts"] + ld["wavefronts"],
    }
    return row


def scan_unchecked(report: dict) -> list[str]:
    """Accesses of a scan report that were not analysed, and buffers whose optimum is unknown.

    >>> scan_unchecked({"buffers": [{"buffer": "%a", "gap": None, "reason": "why",
    ...                              "accesses": [{"op": "ttg.local_load", "error": "bad"}]}]})
    ['%a ttg.local_load not analysed: bad', '%a optimum unknown: why']
    """
    out = []
    for b in report["buffers"]:
        out += [f"{b['buffer']} {a['op']} not analysed: {a['error']}" for a in b["accesses"] if "error" in a]
        if b["gap"] is None:
            out.append(f"{b['buffer']} optimum unknown: {b.get('reason', 'no reason given')}")
    out += [f"convert_layout at line {c['location']['ttgir_line']}: {c['error']}" for c in report.get(
        "conversions", []) if "error" in c]  # fmt: skip
    return out


def scan_text(text: str, path: str = "<ttgir>") -> dict:
    return scan_module(read_ttgir(text), path)


def _copy_width(row: dict, a, enc: str, dist, bits: int) -> None:
    """Say so when a cp.async's width rests on the pointers' alignment, which the TTGIR does not
    carry: Triton copies between the op's ``contiguity`` hint and the layout's run per thread."""
    least, most = copy_elements(a.op.text, enc, dist, bits)
    width = int("".join(c for c in row["instr"] if c.isdigit()) or 0)
    lines = copy_lines(dist, enc, width // max(1, bits), bits)
    issued = row.get("live_instructions", row["instructions"])  # warp copies with a lane on
    per = row["wavefronts"] / max(1, issued)
    if lines > per:  # a warp's copy reads more 128-byte lines than its store has wavefronts
        row["wavefronts_max"] = lines * issued
        row["lines_note"] = (
            f"each warp copy reads {lines} global lines where its rows are not adjacent, for {per:g} store "
            "wavefronts; cp.async then costs more than its store (.ca: the larger of the two, measured in "
            "gpu_checks/results/h100-2026-11-22-cp-async.json; .cg: above its store, not measured alone)"
        )
    if least * bits < width:
        row["width_assumed"] = (
            f"{width // 8}-byte copies assume the pointers are {width // 8}-byte aligned (not in the TTGIR; "
            f"Triton copies {least * bits // 8} to {most * bits // 8} bytes here): give --ptx to check"
        )
