"""``bankproof agree``: prove that a writer (a TMA box, or software with a layout and an XOR) puts
every element where a reader (a wgmma/tcgen05 descriptor, or software) reads it, at the tile's base
address; otherwise the first element read from the wrong byte, both addresses, the element read
instead, and the smallest base alignment at which they agree. Two engines: enumeration of every
element and a Z3 proof; they must agree (exit 4 if not).

>>> r = agree({"tma": "128B", "box": [8, 64]}, {"layout": "(8,64):(64,1)", "swizzle": "Sw<3,4,3>"},
...           dtype="f16", base=1024 + 128)
>>> r.verdict, (r.first_mismatch.row, r.first_mismatch.col), r.smallest_alignment
('refuted', (0, 0), 1024)
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import numpy as np
from bankproof.models import dtypes
from bankproof.models.archs import DEFAULT_ARCH
from bankproof.models.engines.agreement import agreeing_bases, alignment, check
from bankproof.models.engines.placement import DescriptorRead, Placement, TmaBox, period
from bankproof.models.engines.tma import MEASURED
from bankproof.models.errors import InputError
from bankproof.proofs.agreement import prove
from bankproof.verifier.engine.placements import placement
from bankproof.verifier.results import SCHEMA, AgreeResult, Element, EngineAnswer, Proof

MAX_ELEMENTS = 1 << 20
SHARED_BYTES = 1 << 18


def _reads_element(writer: Placement, address: int, base: int) -> tuple[int, ...] | None:
    (r0, c0), (nr, nc) = writer.origin, writer.shape
    rows, cols = np.meshgrid(np.arange(r0, r0 + nr), np.arange(c0, c0 + nc), indexing="ij")
    hit = np.argwhere(np.asarray(writer.address(rows, cols, base)) == address)
    return (int(rows[tuple(hit[0])]), int(cols[tuple(hit[0])])) if len(hit) else None


def _checks(base: object, arch: object, timeout: object) -> tuple[int, str, float]:
    if isinstance(base, bool) or not isinstance(base, int) or not 0 <= base < SHARED_BYTES:
        raise InputError("agree", "base", f"must be a shared byte address from 0 to {SHARED_BYTES - 1}", base)
    if arch not in ("sm90", "sm100"):
        raise InputError("agree", "arch", "must be sm90 or sm100", arch)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 600:
        raise InputError("agree", "timeout", "must be a number of seconds from 0 to 600", timeout)
    return base, arch, float(timeout)


def _notes(w: Placement, r: Placement, base: int) -> tuple[str, ...]:
    out = []
    for p in (w, r):
        m = p.mode if isinstance(p, TmaBox) else getattr(getattr(p, "desc", None), "swizzle", None)
        if m is not None and m.name not in MEASURED:
            out.append(f"{m.name}: published (PTX ISA), not measured")
    if any(isinstance(q, DescriptorRead) and q.desc.arch == "sm100" for q in (w, r)):
        out.append("tcgen05 descriptor: read as sm90's measured rules say (canonical layouts, absolute XOR, "
                   "base-offset phase); published for sm100, not measured")  # fmt: skip
    p = period(w, r)
    out.append(f"base {base} is {base % p} bytes past a {p}-byte boundary")
    return tuple(out)


def agree(
    writer: object = None,
    reader: object = None,
    *,
    dtype: str | None = None,
    base: int | None = None,
    arch: str | None = None,
    timeout: float = 10.0,
    spec: str | os.PathLike | Mapping | None = None,
) -> AgreeResult:
    """Agreement of ``writer`` and ``reader`` (spec tables: see :mod:`bankproof.verifier.engine.
    placements`) for a tile of ``dtype`` at shared address ``base`` (0; ``arch`` sm90), or of
    ``spec``: an agree spec file's path or its table, as ``bankproof agree`` reads it (``base``
    given here overrides the spec's)."""
    if spec is not None:
        given = [
            k
            for k, v in (("writer", writer), ("reader", reader), ("dtype", dtype), ("arch", arch))
            if v is not None
        ]
        if given:
            raise InputError("agree", given[0], "must not be given with spec (the spec says it)")
        if isinstance(spec, Mapping):
            return agree_spec(dict(spec), base=base, timeout=timeout, name="<api>")
        if not isinstance(spec, (str, os.PathLike)):
            raise InputError(
                "agree", "spec", "must be an agree spec's path or its table", type(spec).__name__
            )
        return agree_spec(read_agree_spec(spec), base=base, timeout=timeout, name=str(spec))
    for key, value in (("writer", writer), ("reader", reader), ("dtype", dtype)):
        if value is None:
            raise InputError("agree", key, "is missing (or give spec=)")
    if not isinstance(dtype, str):
        raise InputError("agree", "dtype", "must be a string", dtype)
    return _agree(writer, reader, dtype, 0 if base is None else base, arch or DEFAULT_ARCH, timeout, "<api>")


MAX_SPEC = 64 * 1024  # an agree spec file


def read_agree_spec(path: str | os.PathLike) -> object:
    """An agree spec file's parsed TOML (what :func:`agree_spec` takes)."""
    from bankproof.models.files import read_text
    from bankproof.verifier.api.spec_file import tomllib

    text = read_text(str(path), MAX_SPEC, "spec", "file")
    try:
        return tomllib.loads(text)
    except (ValueError, RecursionError) as e:
        raise InputError("spec", "file", f"is not valid TOML ({str(e)[:80]})") from None


def _agree(
    writer: object, reader: object, dtype: str, base: object, arch: object, timeout: object, spec: str
) -> AgreeResult:
    base, arch, timeout = _checks(base, arch, timeout)
    bits = dtypes.bits(dtype)
    if bits not in (8, 16, 32, 64):
        raise InputError("agree", "dtype", "must be 8, 16, 32 or 64 bits wide", dtype)
    w = placement(writer, "writer", bits, arch, base)
    r = placement(reader, "reader", bits, arch, base)
    for name, p in (("writer", w), ("reader", r)):
        if p.shape[0] * p.shape[1] > MAX_ELEMENTS:
            raise InputError(
                name, "tile", f"must have at most {MAX_ELEMENTS} elements", "x".join(map(str, p.shape))
            )
        if base % p.alignment:
            why = f"must be {p.alignment}-byte aligned for this {name}"
            if isinstance(p, TmaBox):
                why += " (a TMA destination off 128 bytes faults: measured on an H100)"
            raise InputError("agree", "base", why, base)
    ms = int(timeout * 1000)
    en = check(w, r, base)
    z = prove(w, r, base=base, timeout_ms=ms)
    proof = Proof(z.status, "z3", round(z.seconds, 4), z.reason or None)
    verdict = "proved" if en.agree else "refuted"
    if z.status != "unknown" and (z.status == "proved") != en.agree:
        verdict = "disagree"
    elif z.status == "refuted" and z.model is not None:
        # the solver's element must mismatch by enumeration too
        one = check(w, r, base, ((z.model["row"], z.model["col"]), (1, 1)))
        verdict = verdict if not one.agree else "disagree"
    first = None
    if en.first is not None:
        f = en.first
        first = Element(f.row, f.col, f.writer, f.reader, _reads_element(w, f.reader, base))
    p, step, offsets = agreeing_bases(w, r)
    align = alignment(p, step, offsets)
    notes = _notes(w, r, base)
    if verdict != "disagree":  # Z3 over every base: the alignment found, and this base's residue class
        for a, res, want in (
            (align, 0, "proved"),
            (p, base % p, "proved" if base % p in offsets else "refuted"),
        ):
            if a is None:
                continue
            z_all = prove(w, r, align=a, residue=res, timeout_ms=ms)
            if z_all.status not in (want, "unknown"):
                verdict = "disagree"
            notes += (f"z3, every base {res} past a multiple of {a}: {z_all.status}",)
    return AgreeResult(SCHEMA, spec, w.text(), r.text(), base, en.checked, verdict,
                       EngineAnswer("enumeration", "proved" if en.agree else "refuted", en.mismatches),
                       proof, first,
                       align, p, offsets, w.cute() if isinstance(w, TmaBox) else None, notes)  # fmt: skip


def descriptor_value(table: dict, arch: str) -> int:
    """The 64-bit descriptor a table of its fields gives (``{"descriptor": "fields", "start": 0,
    "lbo": 16, ...}``; each field checked as a spec's ``[memory.tma]`` descriptor is).

    >>> fields = {"descriptor": "fields", "start": 0, "lbo": 16, "sbo": 1024, "swizzle": "128B"}
    >>> hex(descriptor_value(fields, "sm90"))
    '0x4000004000010000'
    """
    from bankproof.models.engines.descriptors import encode
    from bankproof.verifier.engine.placements import descriptor

    return encode(descriptor(table, "descriptor", arch, 0))


__all__ = ["agree", "agree_spec", "descriptor_value", "read_agree_spec"]


AGREE_FIELDS = ("dtype", "arch", "base", "writer", "reader")


def agree_spec(
    data: object, base: int | None = None, timeout: float = 10.0, name: str = "<spec>"
) -> AgreeResult:
    """:func:`agree` of an agree spec given as its parsed table (``dtype``, ``writer``, ``reader``,
    and optionally ``arch`` and ``base``; ``base`` here overrides the spec's), as ``bankproof agree``
    reads its file."""
    if not isinstance(data, dict):
        raise InputError(
            "spec", "spec", "must be a table of dtype, arch, base, writer, reader", type(data).__name__
        )
    for key in data:
        if key not in AGREE_FIELDS:
            raise InputError("spec", str(key), f"is not a field of an agree spec ({', '.join(AGREE_FIELDS)})")
    for key in ("dtype", "writer", "reader"):
        if key not in data:
            raise InputError("spec", key, "is missing")
    if not isinstance(data["dtype"], str):
        raise InputError("spec", "dtype", "must be a string", data["dtype"])
    base = base if base is not None else data.get("base", 0)
    arch = data.get("arch", DEFAULT_ARCH)
    return _agree(data["writer"], data["reader"], data["dtype"], base, arch, timeout, name)
