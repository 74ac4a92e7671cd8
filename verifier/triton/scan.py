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

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import chain

from bankproof.models import f2, target
from bankproof.models.errors import InputError
from bankproof.models.layout import LinearLayout
from bankproof.models.notation import parse_layout, triton_memory_text
from bankproof.models.swizzle import Space, optimal_swizzle
from bankproof.models.target import Target
from bankproof.verifier.engine.choice import access_bound, best_cost, candidates, matrix_options
from bankproof.verifier.triton.ttgir import Module, Op, Type, read_ttgir

WRITE_OPS = ("ttg.local_store", "ttg.async_copy_global_to_local")
VIEW_OPS = ("ttg.memdesc_index", "ttg.memdesc_subslice", "ttg.memdesc_trans", "ttg.memdesc_reshape")


@dataclass
class BufferAccess:
    op: Op
    kind: str  # store / load
    tensor: Type
    memdesc: Type
    buffer: str = ""  # the root allocation's SSA name


def _accesses(mod: Module) -> list[BufferAccess]:
    """Every access, with the buffer (root allocation's SSA name) it touches, in program order."""
    root: dict[str, str] = {}
    out: list[tuple[str, BufferAccess]] = []

    def find(v: str) -> str:
        seen = set()
        while v not in seen:
            seen.add(v)
            nxt = root.get(v) or mod.block_args.get(v)
            if nxt is None or nxt == v:
                return v
            v = nxt
        return v

    for op in mod.ops:
        tensors = [t for t in op.types if t.kind == "tensor"]
        mems = [t for t in op.types if t.kind == "memdesc"]
        if op.name == "ttg.local_alloc" and op.result:
            root[op.result] = op.result
            if op.operands and tensors and mems:
                out.append((op.result, BufferAccess(op, "store", tensors[0], mems[-1])))
        elif op.name in VIEW_OPS and op.result and op.operands:
            root[op.result] = op.operands[0]
        elif op.name in WRITE_OPS and len(op.operands) >= 2 and tensors and mems:
            out.append((op.operands[1], BufferAccess(op, "store", tensors[0], mems[0])))
        elif op.name == "ttg.local_load" and op.operands and tensors and mems:
            out.append((op.operands[0], BufferAccess(op, "load", tensors[0], mems[0])))
    return [replace(acc, buffer=find(buf)) for buf, acc in out]


def _sm(target: str | None) -> int:
    """The compute capability of a TTGIR ``ttg.target`` (``cuda:90`` -> 90; 0 when unknown)."""
    if target and target.startswith("cuda:") and target[5:].isdigit():
        return int(target[5:])
    return 0


def _resolved(mod: Module, enc: str) -> str:
    """An encoding's own attribute text, through aliases (``#mma`` -> ``#ttg.nvidia_mma<...>``)."""
    for _ in range(8):
        name = enc.strip()[1:]
        if not enc.strip().startswith("#") or name not in mod.aliases:
            break
        enc = mod.aliases[name]
    return enc


def _instr_candidates(
    acc: BufferAccess, bits: int, sm: int = 0, enc: str | None = None, t: Target | None = None
) -> list[str]:
    """The instructions Triton 3.9.0 may lower an access with, in the order it prefers them; the
    first one the layout pair can deliver is counted (and checked against Triton's PTX).

    Stores of 16-bit mma tiles on sm90+ (a TMA store's epilogue tile, say) use ``stmatrix.x4``,
    as Triton's PTX shows (the corpus's lowering check holds it to that). A target without the
    matrix instructions (``t.matrix``) uses the widest legal vector."""
    if t is not None and not t.matrix:
        return ["auto"]
    enc = enc or acc.tensor.encoding
    if acc.kind == "store" and sm >= 90 and bits == 16 and enc.startswith("#ttg.nvidia_mma"):
        return ["stsm.x4", "stsm.x4.trans", "auto"]
    if acc.kind == "load" and "dot_op" in enc and bits in (8, 16, 32):
        if bits != 16:
            return ["ldsm.x4", "auto"]
        first, second = ("ldsm.x4.trans", "ldsm.x4") if "opIdx = 1" in enc else ("ldsm.x4", "ldsm.x4.trans")
        return [first, second, "auto"]
    return ["auto"]


def _count(
    dist: LinearLayout, memory, bits: int, kind: str, candidates: list[str], arch: str | Target = "sm90"
) -> dict:
    """The first deliverable instruction's exact counts on the target (a fresh dict each call)."""
    return dict(_count_cached(dist, memory, bits, kind, tuple(candidates), target.get(arch)))


@lru_cache(maxsize=1024)
def _count_cached(
    dist: LinearLayout, memory, bits: int, kind: str, candidates: tuple[str, ...], t: Target | None = None
) -> dict:
    """Memoized: a pipelined loop repeats the same access (prologue, body, epilogue)."""
    t = t or target.get("sm90")
    last: Exception | None = None
    for instr in candidates:
        try:
            a = target.build(t, dist, memory, bits, kind, instr)
        except (InputError, ValueError) as e:
            last = e
            continue
        c = target.count(t, a)
        row = {"instr": a.instr.short, "instructions": len(c.counts)}
        if c.rule is not None:  # lane groups: the rule the count rests on
            row.update({"hardware": c.status, "rule": c.rule})
            if not c.known:
                return {**row, "error": f"{c.rule}: not counted"}
        return {**row, "wavefronts": int(c.counts.sum()), "ideal": int(c.ideals.sum()),
                "max_per_instruction": int(c.counts.max()) if len(c.counts) else 0}  # fmt: skip
    raise last if last else InputError("ttgir", "access", "has no instruction")


def _provenance(op: str, instr: str) -> str:
    """How the count of one access is backed: ``measured`` (the hardware model's instructions, and
    Triton's ``cp.async.ca`` copies, which cost their store when their global reads are coalesced)
    or ``assumed`` (16-byte ``cp.async.cg``: Nsight Compute counts no shared wavefronts for it; timed,
    it is fastest conflict-free and many times slower with conflicts than its store count says)."""
    if op == "ttg.async_copy_global_to_local" and instr == "st128":
        return "assumed"
    return "measured"


@lru_cache(maxsize=512)
def _parse(text: str, shape: tuple[int, ...]):
    """``parse_layout`` memoized: a kernel names the same few layouts many times."""
    return parse_layout(text, list(shape)).layout


def _layouts(mod: Module, acc: BufferAccess):
    """The access's distributed layout and the memory layout it goes through. A subslice view
    (``alloc_shape`` written) is placed at the origin of its allocation: a linear memory layout maps
    a shifted block to the same offsets XOR a constant, which keeps every bank-conflict count."""
    view = list(acc.memdesc.shape)
    full = list(acc.memdesc.alloc_shape) or view
    dist = _parse(mod.expand(acc.tensor.encoding), tuple(acc.tensor.shape))
    memory = _parse(mod.expand(acc.memdesc.encoding), tuple(full))
    if full != view:
        if len(full) != len(view) or not isinstance(memory, LinearLayout):
            raise InputError(
                "ttgir", "memdesc", "is a view of a padded or other-rank buffer", acc.memdesc.text
            )
        dims = {name: size for (name, _), size in zip(dist.out_dims, full, strict=True)}
        dist = LinearLayout.from_bases(dist.as_dict(), dims)
    return dist, memory


def _location(op: Op, path: str) -> dict:
    loc = {"ttgir": path, "ttgir_line": op.line}
    if op.loc:
        loc.update({"source": op.loc[0], "line": op.loc[1], "column": op.loc[2]})
    return loc


def scan_module(mod: Module, path: str = "<ttgir>") -> dict:
    """The scan report of one module (see the module docstring)."""
    accesses = _accesses(mod)
    t = target.from_triton(mod.target)
    sm = _sm(mod.target)
    out_buffers = []
    for buf in dict.fromkeys(a.buffer for a in accesses):
        accs = [a for a in accesses if a.buffer == buf]
        rows, problems = [], []
        parsed = []
        for a in accs:
            bits = a.memdesc.elem_bits
            row = {"op": a.op.name, "kind": a.kind, "location": _location(a.op, path)}
            row["layout"] = a.tensor.encoding
            row["shared"] = a.memdesc.encoding
            row["shape"] = list(a.memdesc.shape)
            row["dtype"] = a.memdesc.elem
            try:
                if bits is None:
                    raise InputError("ttgir", "element type", "is not supported", a.memdesc.elem)
                dist, memory = _layouts(mod, a)
                row.update(
                    _count(
                        dist,
                        memory,
                        bits,
                        a.kind,
                        _instr_candidates(a, bits, sm, _resolved(mod, a.tensor.encoding), t),
                        t,
                    )
                )
                if "error" in row:
                    raise InputError("ttgir", "access", row.pop("error"))
                row.setdefault("hardware", _provenance(a.op.name, row["instr"]))
                parsed.append((a, dist, bits))
            except (InputError, ValueError) as e:
                row["error"] = str(e)
                problems.append(str(e))
            rows.append(row)
        entry = {
            "buffer": buf,
            "shape": list(accs[0].memdesc.shape),
            "dtype": accs[0].memdesc.elem,
            "shared": accs[0].memdesc.encoding,
            "accesses": rows,
            "wavefronts": sum(r.get("wavefronts", 0) for r in rows),
        }
        if "optimum" not in t.commands:
            reason = t.not_modeled("optimum")
            entry.update({"optimal_wavefronts": None, "gap": None, "reason": reason})
            out_buffers.append(entry)
            continue
        entry.update(_optimum(parsed, rows))
        if len(parsed) == len(rows) and "nvmma" not in _resolved(mod, accs[0].memdesc.encoding):
            entry.update(_searched(parsed, entry, sm) or {})
        if entry["gap"] is None and rows and all(r["kind"] == "store" and "instr" in r for r in rows):
            entry.update(_nvmma_family(mod, accs, rows) or {})
        out_buffers.append(entry)
    cvts = [op for op in mod.ops if op.name == "ttg.convert_layout"] if "optimum" in t.commands else []
    conversions = [_conversion(mod, op, path) for op in cvts]
    return {"file": path, "target": mod.target, "num_warps": mod.num_warps, "buffers": out_buffers,
            "conversions": conversions}  # fmt: skip


def _optimum(parsed: list, rows: list[dict]) -> dict:
    """The §5.4 layout for the buffer's first writer and first reader, counted for every access
    with the same instruction the chosen layout gets (so the gap compares like with like)."""
    chosen = sum(r.get("wavefronts", 0) for r in rows)
    if parsed and len(parsed) == len(rows) and chosen == sum(r["ideal"] for r in rows):
        # one wavefront per phase is a lower bound for any layout with the same instructions
        return {"optimal_wavefronts": chosen, "gap": 0, "reason": "conflict-free: every access at its ideal"}
    writers = [p for p in parsed if p[0].kind == "store"]
    readers = [p for p in parsed if p[0].kind == "load"]
    if not writers or not readers:
        return {"optimal_wavefronts": None, "gap": None, "reason": "no modeled writer and reader pair"}
    (_, wd, bits), (_, rd, _) = writers[0], readers[0]
    chosen_instr = [r["instr"] for r in rows if "instr" in r]
    try:
        s = optimal_swizzle(whole_buffer(wd), whole_buffer(rd), bits)
        total = 0
        for (a, dist, b), instr in zip(parsed, chosen_instr, strict=True):
            total += _count(dist, s.layout, b, a.kind, [instr])["wavefronts"]
    except (InputError, ValueError) as e:
        reason = f"§5.4 layout with the same instructions: {e}"
        return {"optimal_wavefronts": None, "gap": None, "reason": reason}
    out = {"optimal_wavefronts": total, "gap": chosen - total}
    if chosen == total:
        out["reason"] = "the §5.4 layout for this writer and reader costs the same with these instructions"
        if not (wd.is_surjective() and rd.is_surjective()):
            out["reason"] += " (subslice views extended to the whole buffer)"
    if chosen > total:
        out["better_layout"] = triton_memory_text(s.layout)
    return out


def _legal(op: str, kind: str, bits: int, sm: int) -> list[str]:
    """The instructions an op could use in another layout: ``cp.async`` copies 4, 8 or 16 bytes;
    a register store any ``st`` vector or, 16-bit on sm90+, ``stmatrix``; a load any ``ld`` vector
    or, 16-bit, ``ldmatrix``."""
    if op == "ttg.async_copy_global_to_local":
        return [f"st{w}" for w in (128, 64, 32) if w >= bits]
    return ["auto", *matrix_options(kind, bits, sm >= 90)]


def _searched(parsed: list, entry: dict, sm: int) -> dict | None:
    """Above the bytes / 128 bound, search the (layout, instructions) pairs (``verifier/engine/choice.py``)
    for the buffer's first writer and reader, every access costed with the instructions its op
    could use; a cheaper pair than the same-instructions optimum is the buffer's optimum."""
    chosen = entry["wavefronts"]
    if chosen <= sum(access_bound(dist, bits) for _, dist, bits in parsed):
        return None
    writers = [p for p in parsed if p[0].kind == "store"]
    readers = [p for p in parsed if p[0].kind == "load"]
    if not writers or not readers:
        return None
    (_, wd, bits), (_, rd, _) = writers[0], readers[0]
    try:
        best = cheapest_plan([(a.op.name, a.kind, dist, b) for a, dist, b in parsed], wd, rd, bits, sm)
    except (InputError, ValueError):
        return None
    known = entry.get("optimal_wavefronts")
    if best is None or (known is not None and best[0] >= known):
        return None
    return {
        "optimal_wavefronts": best[0],
        "optimal_same_instructions": known,
        "gap": chosen - best[0],
        "better_layout": triton_memory_text(best[1]),
        "better_instructions": best[2],
        "reason": "another layout with other instructions (searched vectors and instructions) costs less",
    }


def cheapest_plan(
    accesses: list[tuple], wd: LinearLayout, rd: LinearLayout, bits: int, sm: int
) -> tuple | None:
    """The cheapest (total wavefronts, memory layout, instructions) for ``accesses`` ((op, kind,
    distributed layout, element bits) each, every one costed with the instructions its op could
    use) over the searched candidates for writer ``wd`` and reader ``rd`` and the plain layouts."""
    wd, rd = whole_buffer(wd), whole_buffer(rd)
    # The same layouts in the same order as a full search, built lazily: a later layout must be
    # strictly cheaper to win, so the search may stop once the best meets the bytes/128 bound
    # (no layout goes below it) and may skip a layout it has already costed.
    layouts = chain(
        (c.layout for _, c in candidates(wd, rd, bits)),
        trivial_layouts(wd.out_dims),  # never above a plain layout either
        (preferred_layout(wd), preferred_layout(rd)),  # nor a side's own order
    )
    bound = sum(access_bound(dist, b) for _, _, dist, b in accesses)
    best, seen = None, set()
    for memory in layouts:
        if memory in seen:
            continue
        seen.add(memory)
        total, instrs = 0, []
        for op, kind, dist, b in accesses:
            cost = best_cost(dist, kind, memory, b, _legal(op, kind, b, sm))
            if cost is None:
                break
            total += cost[0]
            instrs.append(cost[2])
        else:
            if best is None or total < best[0]:
                best = (total, memory, instrs)
            if best[0] <= bound:
                break
    return best


def trivial_layouts(out_dims) -> list[LinearLayout]:
    """Row-major (last dim fastest) and column-major (first dim fastest) unswizzled layouts.

    >>> [lay.as_dict()["offset"] for lay in trivial_layouts((("m", 2), ("n", 4)))]
    [[[0, 1], [0, 2], [1, 0]], [[1, 0], [0, 1], [0, 2]]]
    """
    dims = list(out_dims)
    out = []
    for order in (reversed(range(len(dims))), range(len(dims))):
        cols = []
        for d in order:
            for k in range(dims[d][1].bit_length() - 1):
                cols.append([1 << k if i == d else 0 for i in range(len(dims))])
        out.append(LinearLayout.from_bases({"offset": cols}, dict(dims)))
    return out


def preferred_layout(dist: LinearLayout) -> LinearLayout:
    """One side's own order as the memory layout: its register, lane and warp bases (the
    independent ones, in that order) at offset bits 0.., then the tensor bits it does not reach
    (row-major): that side's access walks memory in its own order.

    >>> lay = LinearLayout.from_bases({"register": [[1, 0]], "lane": [[0, 1], [0, 0]]}, {"m": 2, "n": 4})
    >>> preferred_layout(lay).as_dict()["offset"]
    [[1, 0], [0, 1], [0, 2]]
    """
    space = Space.of(dist)
    cols: list[int] = []
    units = [1 << k for k in range(space.bits)]  # row-major: the last dim's bits first
    own = [space.pack_row_major(b) for d in ("register", "lane", "warp") for b in dist.in_bases(d)]
    for v in own + units:
        if v and not f2.in_span(v, cols):
            cols.append(v)
    return LinearLayout.from_bases({"offset": [list(space.unpack_row_major(v)) for v in cols]},
                                   dict(dist.out_dims))  # fmt: skip


def whole_buffer(dist: LinearLayout) -> LinearLayout:
    """A subslice view's layout (placed at the buffer's origin) extended to the whole buffer: the
    tensor bits the view does not reach become register bits, i.e. the same warps read the other
    subslices, each a shifted copy of the first. A layout that already covers the buffer is
    returned as it is.

    >>> view = LinearLayout.from_bases({"register": [[0, 1]], "lane": [[1, 0]]}, {"m": 2, "k": 4})
    >>> whole_buffer(view).as_dict()["register"]
    [[0, 1], [0, 2]]
    """
    if dist.is_surjective():
        return dist
    image = [c for c in dist.columns if c]
    missing: list[int] = []
    for bit in range(dist.out_bits):
        if not f2.in_span(1 << bit, image + missing):
            missing.append(1 << bit)
    bases = dist.as_dict()
    bases["register"] = bases.get("register", []) + [list(dist.unpack_dim0_lowest(v)) for v in missing]
    return LinearLayout.from_bases(bases, dict(dist.out_dims))


def _nvmma_family(mod: Module, accs: list[BufferAccess], rows: list[dict]) -> dict | None:
    """A write-only buffer in ``nvmma_shared`` (read by wgmma/tcgen05, which bankproof does not
    model) can only change within that family: the cheapest ``swizzlingByteWidth`` (0/32/64/128,
    same transposition and element width) for its writers, with the same instructions."""
    enc = accs[0].memdesc.encoding
    text = mod.aliases.get(enc[1:], enc) if enc.startswith("#") and "<" not in enc else enc
    if "nvmma_shared" not in text or "swizzlingByteWidth" not in text:
        return None
    best: tuple[int, str, list[str]] | None = None
    sm = _sm(mod.target)
    for sw in (0, 32, 64, 128):
        cand = re.sub(r"swizzlingByteWidth = \d+", f"swizzlingByteWidth = {sw}", text)
        total, instrs = 0, []
        try:
            for a, r in zip(accs, rows, strict=True):
                dist, memory = _layouts(mod, replace(a, memdesc=replace(a.memdesc, encoding=cand)))
                bits = a.memdesc.elem_bits or 8
                opts = list(dict.fromkeys([r["instr"], *_legal(a.op.name, a.kind, bits, sm)]))
                cost = best_cost(dist, a.kind, memory, bits, opts)
                if cost is None:
                    raise ValueError("no instruction")
                total += cost[0]
                instrs.append(cost[2])
        except (InputError, ValueError):
            continue
        if best is None or total < best[0]:
            best = (total, cand, instrs)
    if best is None:
        return None
    chosen = sum(r["wavefronts"] for r in rows)
    writer = _writer_family(mod, accs, rows, text)
    out = {
        "optimal_wavefronts": min(best[0], chosen),
        "gap": max(0, chosen - best[0]),
        "reason": "write-only nvmma_shared buffer: optimum over swizzlingByteWidth 0/32/64/128 and each "
        "writer's legal instructions",
    }
    if best[0] < chosen:
        out["better_layout"] = best[1]
        if best[2] != [r["instr"] for r in rows]:
            out["better_instructions"] = best[2]
    if writer is not None:
        out["better_writer"] = writer
    return out


def _writer_family(mod: Module, accs: list[BufferAccess], rows: list[dict], text: str) -> dict | None:
    """cp.async writers (every access of the buffer, one distributed layout) above their ideal: the
    cheapest equally coalesced writer (:mod:`bankproof.verifier.engine.writers`) on each swizzle width of
    the buffer's nvmma family, counted for every access."""
    from bankproof.verifier.engine.writers import cheapest_writer

    if any(a.op.name != "ttg.async_copy_global_to_local" for a in accs):
        return None
    chosen = sum(r["wavefronts"] for r in rows)
    if chosen <= sum(r["ideal"] for r in rows):
        return None
    a = accs[0]
    bits = a.memdesc.elem_bits or 8
    best, searched = None, 0
    own = re.search(r"swizzlingByteWidth = (\d+)", text)
    for sw in dict.fromkeys([int(own.group(1)) if own else 128, 0, 32, 64, 128]):  # the buffer's own first
        cand = re.sub(r"swizzlingByteWidth = \d+", f"swizzlingByteWidth = {sw}", text)
        try:
            pairs = [_layouts(mod, replace(x, memdesc=replace(x.memdesc, encoding=cand))) for x in accs]
            if any(d != pairs[0][0] for d, _ in pairs):
                return None
            dist, memory = pairs[0]
            w = cheapest_writer(dist, memory, bits, _legal(a.op.name, a.kind, bits, _sm(mod.target)))
        except (InputError, ValueError):
            continue
        if w is None:
            continue
        searched += w.searched
        if best is None or w.wavefronts < best[0].wavefronts:
            best = (w, cand)
    if best is None:
        return None
    w, cand = best
    total = w.wavefronts * len(accs)
    if total >= chosen:
        return {
            "wavefronts": chosen,
            "searched": searched,
            "reason": "no equally coalesced writer is cheaper",
        }
    return {
        "wavefronts": total,
        "per_access": w.wavefronts,
        "instr": w.instr,
        "layout": w.layout.as_dict(),
        "shared": cand,
        "searched": searched,
        "reason": "writers moving the same 128-byte global lines per warp instruction (lanes: any 5-dim "
        "subspace of the warp's contiguous-dimension bits), every nvmma swizzle width, the op's copy widths",
    }


def _conversion(mod: Module, op: Op, path: str) -> dict:
    row = {"op": op.name, "location": _location(op, path)}
    tensors = [t for t in op.types if t.kind == "tensor"]
    if len(tensors) != 2 or tensors[0].elem_bits is None:
        return {**row, "error": "types not understood"}
    src, dst = tensors
    row.update({"from": src.encoding, "to": dst.encoding, "shape": list(src.shape), "dtype": src.elem})
    try:
        a = _parse(mod.expand(src.encoding), tuple(src.shape))
        b = _parse(mod.expand(dst.encoding), tuple(dst.shape))
        op_kind = [(op.name, "store", a, src.elem_bits), (op.name, "load", b, src.elem_bits)]
        best = cheapest_plan(op_kind, a, b, src.elem_bits, _sm(mod.target))
    except (InputError, ValueError) as e:
        return {**row, "error": str(e)}
    if best is None:
        return {**row, "error": "no searched layout carries both sides"}
    total, memory, instrs = best
    st = _count(a, memory, src.elem_bits, "store", [instrs[0]])
    ld = _count(b, memory, src.elem_bits, "load", [instrs[1]])
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
