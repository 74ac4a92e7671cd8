"""Scan TTGIR: every shared buffer, every access to it, its exact wavefronts, the optimum for the
buffer's writers and readers together, and a better layout when there is one.

Instruction policy (what each access is counted with): ``local_load`` into a ``dot_op`` uses
``ldmatrix.x4`` when it can deliver the layout (16-bit: ``.trans`` tried first for operand B,
plain first for operand A; 8- and 32-bit: plain), as Triton 3.9's lowering does (checked against
its PTX, ``verifier/triton/lowering.py``); every other access uses the widest ld/st vector legal
on every lane (``auto``). ``async_copy_global_to_local`` is counted as a store of the same width. Measured
(``models.copy_rule.ldgsts_wavefronts``): Triton's 4- and 8-byte copies (``cp.async.ca``) cost
the larger of their store and their global reads' conflicts in L1's banks (none for coalesced
copies); its 16-byte copies (``cp.async.cg``, LDGSTS.BYPASS) have no shared
wavefronts Nsight Compute can count, so their store count is an assumption (``hardware``).

>>> text = open(__file__.replace("scan.py", "sample.ttgir")).read()
>>> rep = scan_text(text, "sample.ttgir")
>>> [(a.op, a.wavefronts, a.ideal) for a in rep.buffers[0].accesses]
[('ttg.local_alloc', 16, 16), ('ttg.local_load', 256, 16)]
>>> rep.buffers[0].optimal_wavefronts, rep.buffers[0].gap
(32, 240)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from bankproof.models import target
from bankproof.models.errors import InputError
from bankproof.models.notation import triton_memory_text
from bankproof.verifier.results import AccessAnswer
from bankproof.verifier.results.decode import decode
from bankproof.verifier.triton.accesses import (
    BufferName,
    buffer_accesses,
    buffer_names,
    copy_elements,
    copy_order0,
    copy_read_wavefronts,
    count_access,
    instr_candidates,
    layouts_of,
    location,
    parse_cached,
    provenance,
    resolved,
    roots,
    sm_of,
)
from bankproof.verifier.triton.optimum import nvmma_family, same_instructions, searched
from bankproof.verifier.triton.plans import cheapest_plan
from bankproof.verifier.triton.scan_records import (
    AccessRow,
    BufferReport,
    ConversionRow,
    Optimum,
    ScanReport,
    SharedPlan,
)
from bankproof.verifier.triton.strides import module_strides
from bankproof.verifier.triton.ttgir import SCAN_OPS, Module, Op, read_ttgir


def scan_module(
    mod: Module, path: str = "<ttgir>", engines: tuple[str, ...] = (), timeout_s: float = 10.0
) -> ScanReport:
    """The scan report of one module (see the module docstring); ``engines``: those each access's
    answer runs beside its count (none: counted only, the default)."""
    find = roots(mod)  # the root allocation of each value, read once for the accesses and the roles
    accesses = buffer_accesses(mod, find)
    names = buffer_names(mod, accesses, find)
    try:
        t = target.from_triton(mod.target)
    except InputError as e:  # not counted with another arch's model: every access unchecked
        return _unmodeled(mod, accesses, path, str(e), names)
    sm = sm_of(mod.target)
    out_buffers = []
    for buf in dict.fromkeys(a.buffer for a in accesses):
        accs = [a for a in accesses if a.buffer == buf]
        rows, parsed = [], []
        for a in accs:
            row, got = _counted(mod, a, path, t, sm, engines, timeout_s)
            rows.append(row)
            if got is not None:
                parsed.append(got)
        if "optimum" not in t.commands:
            optimum = Optimum(optimal_wavefronts=None, gap=None, reason=t.not_modeled("optimum"))
            out_buffers.append(_buffer(buf, accs, rows, names, optimum))
            continue
        fields = same_instructions(parsed, rows).to_dict()
        chosen = sum(r.wavefronts or 0 for r in rows)
        if len(parsed) == len(rows) and "nvmma" not in resolved(mod, accs[0].memdesc.encoding):
            better = searched(parsed, chosen, fields["optimal_wavefronts"], sm)
            fields.update(better.to_dict() if better else {})
        if fields["gap"] is None and rows and all(r.kind == "store" and r.instr for r in rows):
            family = nvmma_family(mod, accs, rows)
            fields.update(family.to_dict() if family else {})
        out_buffers.append(_buffer(buf, accs, rows, names, decode(Optimum, fields, "scan")))
    cvts = [op for op in mod.ops if op.name == "ttg.convert_layout"] if "optimum" in t.commands else []
    plans: dict = {}  # conversions between the same layouts (a forward and a backward pass) share one plan
    conversions = tuple(_conversion(mod, op, path, plans) for op in cvts)
    return ScanReport(file=path, target=mod.target, num_warps=mod.num_warps, buffers=tuple(out_buffers),
                      conversions=conversions)  # fmt: skip


COPY_FIELDS = ("live_instructions", "redundant", "unguarded_wavefronts")  # a copy's, beside its answer


def _counted(mod: Module, a, path: str, t, sm: int, engines: tuple[str, ...], timeout_s: float):
    """One access's row (its answer the engine's, ``error`` where it was not analysed), and
    ``(access, layout, bits)`` for the optimum where it was."""
    bits = a.memdesc.elem_bits
    got, extra = None, {}
    try:
        if bits is None:
            raise InputError("ttgir", "element type", "is not supported", a.memdesc.elem)
        dist, memory = layouts_of(mod, a)
        enc = resolved(mod, a.tensor.encoding)
        copy = a.op.name == "ttg.async_copy_global_to_local"
        candidates = instr_candidates(a, bits, sm, enc, t, dist)
        count = count_access(dist, memory, bits, a.kind, candidates, t, copy, engines, timeout_s)
        got = count.answer
        extra = {k: getattr(count, k) for k in COPY_FIELDS if getattr(count, k) is not None}
        if got.rule is not None and got.wavefronts is None:
            raise InputError("ttgir", "access", f"{got.rule}: not counted")
        if copy and t.matrix:
            view = {
                "instr": got.instr,
                "instructions": got.instructions,
                "wavefronts": got.wavefronts,
                **extra,
            }
            _copy_width(view, a, enc, dist, bits, _global_stride(mod, a, enc, dist))
            extra.update(
                {k: v for k, v in view.items() if k in ("wavefronts_max", "lines_note", "width_assumed")}
            )
        # what the count rests on: a lane-group rule's status, else the target's own
        # (provenance refines a measured one)
        if got.rule is None:
            got = replace(
                got, rests_on=provenance(a.op.name, got.instr) if t.status == "measured" else t.status
            )
        return _row(a, path, got, **extra), (a, dist, bits)
    except (InputError, ValueError) as e:  # what was counted before the error stays
        return _row(a, path, got or AccessAnswer.unknown(str(e)), **extra, error=str(e)), None


def _row(a, path: str, answer: AccessAnswer, **extra) -> AccessRow:
    """What every access row says, counted or not."""
    return AccessRow(op=a.op.name, kind=a.kind, location=location(a.op, path), layout=a.tensor.encoding,
                     shared=a.memdesc.encoding, shape=tuple(a.memdesc.shape), dtype=a.memdesc.elem,
                     answer=answer, **extra)  # fmt: skip


def _buffer(
    buf: str, accs: list, rows: list[AccessRow], names: Mapping[str, BufferName], optimum: Optimum
) -> BufferReport:
    name, role = names[buf]
    return BufferReport(buffer=buf, name=name, role=role, shape=tuple(accs[0].memdesc.shape),
                        dtype=accs[0].memdesc.elem, shared=accs[0].memdesc.encoding, accesses=tuple(rows),
                        wavefronts=sum(r.wavefronts or 0 for r in rows), optimum=optimum)  # fmt: skip


def _unmodeled(
    mod: Module, accesses: list, path: str, why: str, names: Mapping[str, BufferName]
) -> ScanReport:
    """The report of a module whose target has no model: every access and conversion listed as
    not analysed (``why``), so a gate exits 3 instead of passing on another arch's counts."""
    buffers = []
    for buf in dict.fromkeys(a.buffer for a in accesses):
        accs = [a for a in accesses if a.buffer == buf]
        rows = [_row(a, path, AccessAnswer.unknown(why), error=why) for a in accs]
        buffers.append(
            _buffer(buf, accs, rows, names, Optimum(optimal_wavefronts=None, gap=None, reason=why))
        )
    cvts = tuple(ConversionRow(op=op.name, location=location(op, path), error=why)
                 for op in mod.ops if op.name == "ttg.convert_layout")  # fmt: skip
    return ScanReport(file=path, target=mod.target, num_warps=mod.num_warps, buffers=tuple(buffers),
                      conversions=cvts)  # fmt: skip


def _conversion(mod: Module, op: Op, path: str, plans: dict) -> ConversionRow:
    where = location(op, path)
    tensors = [t for t in op.types if t.kind == "tensor"]
    if len(tensors) != 2 or tensors[0].elem_bits is None:
        return ConversionRow(op=op.name, location=where, error="types not understood")
    src, dst = tensors
    row = ConversionRow(op=op.name, location=where, source_layout=src.encoding, target_layout=dst.encoding,
                        shape=tuple(src.shape), dtype=src.elem)  # fmt: skip
    key = (
        mod.expand(src.encoding),
        mod.expand(dst.encoding),
        tuple(src.shape),
        tuple(dst.shape),
        src.elem_bits,
    )
    if key not in plans:
        plans[key] = _plan(mod, op, *key)
    got = plans[key]
    return replace(row, error=got) if isinstance(got, str) else replace(row, shared_plan=got)


def _plan(mod: Module, op: Op, src_enc: str, dst_enc: str, src_shape: tuple, dst_shape: tuple,
          bits: int) -> SharedPlan | str:  # fmt: skip
    """The cheapest shared-memory round trip of a conversion, or why there is none."""
    try:
        a = parse_cached(src_enc, src_shape)
        b = parse_cached(dst_enc, dst_shape)
        op_kind = [(op.name, "store", a, bits), (op.name, "load", b, bits)]
        best = cheapest_plan(op_kind, a, b, bits, sm_of(mod.target))
    except (InputError, ValueError) as e:
        return str(e)
    if best is None:
        return "no searched layout carries both sides"
    total, memory, instrs = best
    st = count_access(a, memory, bits, "store", [instrs[0]])
    ld = count_access(b, memory, bits, "load", [instrs[1]])
    return SharedPlan(layout=triton_memory_text(memory), store=st, load=ld,
                      wavefronts=(st.wavefronts or 0) + (ld.wavefronts or 0))  # fmt: skip


def scan_unchecked(report: ScanReport) -> list[str]:
    """Accesses of a scan report that were not analysed, and buffers whose optimum is unknown.

    >>> from bankproof.verifier.triton.scan_records import Location, Optimum
    >>> row = AccessRow(op="ttg.local_load", kind="load", location=Location(ttgir="k", ttgir_line=3),
    ...                 layout="#b", shared="#s", shape=(8,), dtype="f16", answer=AccessAnswer.unknown("bad"),
    ...                 error="bad")
    >>> buf = BufferReport(buffer="%a", shape=(8,), dtype="f16", shared="#s", accesses=(row,),
    ...                    wavefronts=0, optimum=Optimum(optimal_wavefronts=None, gap=None, reason="why"))
    >>> scan_unchecked(ScanReport(file="k", target=None, num_warps=1, buffers=(buf,), conversions=()))
    ['%a ttg.local_load not analysed: bad', '%a optimum unknown: why']
    """
    out = []
    for b in report.buffers:
        out += [f"{b.shown} {a.op} not analysed: {a.error}" for a in b.accesses if a.error is not None]
        if b.gap is None:
            out.append(f"{b.shown} optimum unknown: {b.reason or 'no reason given'}")
    out += [f"convert_layout at line {c.location.ttgir_line}: {c.error}" for c in report.conversions
            if c.error is not None]  # fmt: skip
    return out


def scan_text(text: str, path: str = "<ttgir>", engines: tuple[str, ...] = ()) -> ScanReport:
    return scan_module(read_ttgir(text, SCAN_OPS), path, engines)


def _global_stride(mod: Module, a, enc: str, dist) -> int | None:
    """The global element stride along a copy's contiguous dim, read from the TTGIR that builds its
    pointers (``None``: a runtime value, or not followed); 1 along a dim of one element."""
    first = copy_order0(enc, dist)
    if first < len(a.tensor.shape) and a.tensor.shape[first] == 1:
        return 1
    strides = module_strides(mod, a.op.operands[0]) if a.op.operands else None
    return strides[first] if strides is not None and first < len(strides) else None


def _copy_width(row: dict, a, enc: str, dist, bits: int, stride: int | None) -> None:  # row: its JSON form
    """Say so when a cp.async's width rests on the pointers' alignment, which the TTGIR does not
    carry: Triton copies between the op's ``contiguity`` hint and the layout's run per thread; and
    when its global lines may outnumber its store's wavefronts (rows apart, or a runtime stride
    along the contiguous dim)."""
    least, most = copy_elements(a.op.text, enc, dist, bits)
    width = int("".join(c for c in row["instr"] if c.isdigit()) or 0)
    reads = copy_read_wavefronts(dist, enc, width // max(1, bits), bits, stride)
    issued = row.get("live_instructions", row["instructions"])  # warp copies with a lane on
    per = row["wavefronts"] / max(1, issued)
    # the global reads may conflict in L1's banks: where either side is conflict-free the sides
    # nest (the larger costs); else they may cross (up to the sum: measured)
    # (Triton's 16-byte copies are .cg, not measured crossing: the larger, as measured before)
    top = max(reads, per) if min(reads, per) <= 1 or width >= 16 else per + reads
    if top > per:
        row["wavefronts_max"] = int(top) * issued
        where = (
            "its rows lie at global offsets the TTGIR does not give"
            if stride == 1
            else "the stride along its contiguous dim is a runtime value"
            if stride is None
            else f"its contiguous dim has global stride {stride} and its rows lie at offsets not given"
        )
        row["lines_note"] = (
            f"each warp copy's global reads may cost up to {reads} wavefronts in L1's banks where {where}, "
            f"for {per:g} store wavefronts (.ca: the larger of the two where their conflicts nest, up to "
            "their sum where they cross, measured in gpu_checks/results/h100-2026-12-07-cp-async-cross"
            ".json.gz; .cg: not measured alone)"
        )
    if least * bits < width:
        row["width_assumed"] = (
            f"{width // 8}-byte copies assume the pointers are {width // 8}-byte aligned (not in the TTGIR; "
            f"Triton copies {least * bits // 8} to {most * bits // 8} bytes here): give --ptx to check"
        )
