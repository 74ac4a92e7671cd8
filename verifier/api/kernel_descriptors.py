"""The TMA boxes of a kernel's run and the wgmma descriptors that read them: each descriptor value
checked against the box whose tile holds its start (``bankproof agree``'s rules), for
``bankproof kernel --tensor-map``.

>>> MMA_SHAPE.search("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16").group(1)
'm64n128k16'
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from bankproof.models import dtypes
from bankproof.models.engines.descriptors import decode
from bankproof.models.errors import InputError
from bankproof.verifier.api.agree import agree
from bankproof.verifier.kernel.analyse import KernelSource
from bankproof.verifier.kernel.records import DescriptorCheck, SourceLine

WHERE = "kernel"
MMA_SHAPE = re.compile(r"\.(m\d+n\d+k\d+)\.")


def tensor_maps_of(maps: Mapping | None, src: KernelSource, names: dict[str, int]) -> dict[str, dict]:
    """The user's tensor maps by PTX parameter name: ``{param: {"tma": MODE, "box": [rows, cols],
    "dtype": DTYPE}}`` (a parameter by its C++ name, PTX name or position), each field checked."""
    if maps is None:
        return {}
    if not isinstance(maps, Mapping):
        raise InputError(WHERE, "tensor_maps", "must map parameters to {tma, box, dtype}", maps)
    params = [n for _, n in src.code.params]
    out = {}
    for key, spec in maps.items():
        k = str(key)
        pos = names.get(k, int(k) if k.isdigit() else None)
        name = params[pos] if pos is not None and pos < len(params) else (k if k in params else None)
        if name is None:
            raise InputError(WHERE, "tensor_maps", f"names no parameter of {src.code.name}", key)
        if (
            not isinstance(spec, Mapping)
            or set(spec) - {"tma", "box", "dtype", "panels"}
            or "dtype" not in spec
        ):
            raise InputError(WHERE, "tensor_maps", "each must be {tma: MODE, box: [rows, cols], dtype}", spec)
        if name in out:
            raise InputError(WHERE, "tensor_maps", f"gives {name}'s tensor map twice", key)
        _check_box(k, spec)
        out[name] = dict(spec)
    return out


def _check_box(key: str, spec: Mapping) -> None:
    """A tensor map's fields as TMA takes them (the box built once: 0 rows, a box wider than its
    mode's span or not a multiple of 16 bytes refused here, naming the map, whether or not a
    descriptor reads it)."""
    from bankproof.models.engines.placement import TmaBox
    from bankproof.models.engines.tma import mode

    box, panels = spec.get("box"), spec.get("panels", 1)
    try:
        if not isinstance(spec["dtype"], str):
            raise InputError(WHERE, "dtype", "must be a string", spec["dtype"])
        if (
            not isinstance(box, (list, tuple))
            or len(box) != 2
            or any(isinstance(v, bool) or not isinstance(v, int) for v in box)
        ):
            raise InputError(WHERE, "box", "must be [rows, cols] (integers)", box)
        if isinstance(panels, bool) or not isinstance(panels, int):
            raise InputError(WHERE, "panels", "must be an integer", panels)
        TmaBox(mode(str(spec.get("tma"))), box[0], box[1], dtypes.bits(spec["dtype"]), panels)
    except InputError as e:
        what = "dtype" if e.where == "dtype" else e.field
        raise InputError(WHERE, "tensor_maps", f"{key}: {what} {e.problem}", e.value) from None


def check_descriptors(trace_engines, code, maps: dict[str, dict]) -> tuple[DescriptorCheck, ...]:
    """Each wgmma operand descriptor of the run (per distinct value) against the TMA box whose tile
    holds its start: ``bankproof agree`` on the box (the tensor map's mode and box at the copy's
    shared address) and the descriptor (its K offset in the tile as ``k_origin``)."""
    boxes = []  # (start, end, param, spec) of every TMA copy whose tensor map is given
    for rows in trace_engines.values():
        for r in rows:
            if r.address is not None and r.tensor_map in maps:
                spec = maps[r.tensor_map]
                rows_, cols = spec["box"]
                size = int(rows_) * int(cols) * dtypes.bits(spec["dtype"]) // 8 * int(spec.get("panels", 1))
                boxes.append((r.address, r.address + size, r.tensor_map, spec))
    checks, seen = [], set()
    for i, rows in sorted(trace_engines.items()):
        op = code.body[i]
        for r in rows:
            for which, value in zip("AB", r.descriptors):
                if value is not None and (i, which, value) not in seen:
                    seen.add((i, which, value))
                    checks.append(_check_one(op, which, value, boxes, bool(maps)))
    return tuple(checks)


def _check_one(op, which: str, value: int, boxes: list, given: bool) -> DescriptorCheck:
    loc = SourceLine(op.loc.file, op.loc.line, op.loc.column) if op.loc else None
    d = decode(value, "sm90")
    words = f"{d.swizzle.name}, start {d.start}, LBO {d.lbo}, SBO {d.sbo}, base offset {d.base_offset}"
    base = dict(ptx_line=op.ptx_line, location=loc, operand=which, descriptor=hex(value), decoded=words)
    box = next((b for b in boxes if b[0] <= d.start < b[1]), None)
    if box is None:
        why = (
            "no TMA box of a given tensor map holds its start"
            if given
            else "no tensor maps given (--tensor-map)"
        )
        return DescriptorCheck(**base, verdict="unknown", reason=why)
    start, _, param, spec = box
    trans = op.operands[-2 if which == "A" else -1].strip()
    major = "MN" if trans == "1" else "K"
    delta = d.start - start
    if major != "K" or delta >= {"128B": 128, "64B": 64, "32B": 32}.get(str(spec.get("tma")), 16):
        why = "a descriptor starting past its tile's first row (or MN-major) is not checked here: see agree"
        return DescriptorCheck(**base, verdict="unknown", tensor_map=param, tile_base=start, reason=why)
    reader = {"descriptor": hex(value), "major": major, "operand": which,
              "k_origin": delta * 8 // dtypes.bits(spec["dtype"])}  # fmt: skip
    shape = MMA_SHAPE.search(op.opcode)
    if shape:
        reader["instruction"] = shape.group(1)
    writer = {
        "tma": spec.get("tma"),
        "box": spec.get("box"),
        **({"panels": spec["panels"]} if "panels" in spec else {}),
    }
    r = agree(writer, reader, dtype=spec["dtype"], base=start, arch="sm90")
    mm = r.first_mismatch
    text = None
    if mm is not None:
        at = f"written at byte {mm.writer_address}, read at {mm.reader_address}"
        text = f"element ({mm.row}, {mm.col}) is {at}"
    return DescriptorCheck(**base, verdict=r.verdict, tensor_map=param, tile_base=start, mismatch=text)


__all__ = ["tensor_maps_of", "check_descriptors", "MMA_SHAPE"]
