"""``bankproof descriptor``: a wgmma (sm90) or tcgen05 (sm100) shared-memory descriptor, decoded:
its fields, its swizzle as CuTe writes it, the canonical layout and the tile it reads. ``bankproof
agree``: a writer and a reader of a tile agree on its bytes (:mod:`bankproof.verifier.api.agree`).

>>> import io; buf = io.StringIO()
>>> class A: value, fields, arch, major, dtype, rows = "0x4000004000010040", None, "sm90", "K", "f16", 8
>>> A.json = False
>>> descriptor(A, buf, buf)
0
>>> print(buf.getvalue().splitlines()[1])
  start address 1024, leading byte offset 16, stride byte offset 1024, base offset 0
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from bankproof.models import dtypes
from bankproof.models.engines.descriptors import canonical, decode, read_addresses
from bankproof.models.engines.placement import check_major
from bankproof.models.errors import InputError
from bankproof.verifier.api.agree import descriptor_value
from bankproof.verifier.results import SCHEMA

# the operand types the tile reads (PTX's spellings too), by the project's dtype names
DTYPES = {"f16": "f16", "bf16": "bf16", "tf32": "tf32", "f32": "f32", "e4m3": "f8e4m3", "e5m2": "f8e5m2",
          "s8": "i8", "u8": "u8"}  # fmt: skip


def _encode_fields(text: str, arch: str) -> int:
    """``start=0,lbo=16,sbo=1024,swizzle=128B`` -> the 64-bit value (fields checked)."""
    table: dict = {"descriptor": "fields"}
    for part in text.split(","):
        key, sep, v = part.partition("=")
        key, v = key.strip(), v.strip()
        if not sep or key not in ("start", "lbo", "sbo", "swizzle", "base_offset", "lbo_mode"):
            raise InputError("descriptor", "fields", "must be NAME=VALUE pairs of start, lbo, sbo, swizzle, "
                             "base_offset, lbo_mode", part)  # fmt: skip
        if key in table:
            raise InputError("descriptor", "fields", f"gives {key} twice", text)
        if key != "swizzle":
            try:
                v = int(v, 0)
            except ValueError:
                raise InputError("descriptor", key, "must be an integer", v) from None
        table[key] = v
    return descriptor_value(table, arch)


def descriptor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if (args.value is None) == (args.fields is None):
        raise InputError("descriptor", "value", "give the 64-bit value or --fields (one of them)")
    if args.fields is not None:
        value = _encode_fields(args.fields, args.arch)
    else:
        text = str(args.value).strip().lower()
        try:
            value = int(text, 16) if text.startswith("0x") else int(text)
        except ValueError:
            why = "must be a 64-bit integer (0x... hex or decimal)"
            raise InputError("descriptor", "value", why, args.value) from None
    if dtypes.canonical(args.dtype) not in DTYPES.values():
        raise InputError("descriptor", "dtype", f"must be one of {', '.join(DTYPES)} (or another spelling)",
                         args.dtype)  # fmt: skip
    d = decode(value, args.arch)
    unmodelled = None
    try:
        check_major(d, args.major, dtypes.bits(args.dtype))
    except InputError as e:  # a rule refuses; a read bankproof does not model is said, not refused
        if "not modelled" not in str(e):
            raise
        unmodelled = str(e)
    canon = "not modelled" if unmodelled else canonical(args.major, d.swizzle.name)
    addrs = None if unmodelled else read_addresses(d, args.major, dtypes.bits(args.dtype), args.rows)
    tile = None
    if addrs is not None:
        tile = {"rows": args.rows, "k": int(addrs.shape[1]), "byte_addresses": addrs.tolist()}
    notes = [unmodelled] if unmodelled else []
    if d.reserved:
        notes.append(f"reserved bits are set ({', '.join(d.reserved)}): PTX says 0, CUTLASS writes 0; "
                     "decoded without them")  # fmt: skip
    if args.arch == "sm100":
        notes.append(
            "tcgen05: read with the rules measured for sm90 wgmma (published for sm100, not measured)"
        )
    result = {"schema": SCHEMA, **d.fields(), "value": f"0x{value:016x}", "arch": args.arch,
              "major": args.major, "dtype": args.dtype, "canonical_16B_units": canon, "tile": tile,
              "notes": notes}  # fmt: skip
    if args.json:
        out.write(json.dumps(result, indent=1) + "\n")
        return 0
    out.write(f"{args.arch} descriptor 0x{value:016x}\n")
    out.write(f"  start address {d.start}, leading byte offset {d.lbo}, stride byte offset {d.sbo}, "
              f"base offset {d.base_offset}\n")  # fmt: skip
    mode = ", lbo mode absolute" if d.lbo_mode else ""
    out.write(f"  swizzle {d.swizzle.name} ({d.swizzle.cute} on byte addresses){mode}\n")
    out.write(f"  canonical {args.major}-major layout, 16-byte units: {'Sw o ' * (not unmodelled)}{canon}\n")
    if addrs is not None:
        out.write(f"  tile read: {args.rows} rows x {addrs.shape[1]} {args.dtype} (one 32-byte K step); "
                  "byte address of each row's first element:\n")  # fmt: skip
        out.write("   " + " ".join(str(int(a)) for a in addrs[:, 0]) + "\n")
    out.writelines(f"  note: {n}\n" for n in notes)
    return 0


def agree(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from bankproof.verifier.api.agree import agree_spec, read_agree_spec
    from bankproof.verifier.render.display import to_text

    r = agree_spec(read_agree_spec(args.spec), base=args.base, timeout=args.timeout, name=str(args.spec))
    out.write(r.to_json() if args.json else to_text(r) + "\n")
    return r.exit_code
