"""``bankproof descriptor``: a wgmma (sm90) or tcgen05 (sm100) shared-memory descriptor, decoded:
its fields, its swizzle as CuTe writes it, the canonical layout and the tile it reads.

>>> import io; buf = io.StringIO()
>>> class A: value, arch, major, dtype, rows, json = "0x4000004000010040", "sm90", "K", "f16", 8, False
>>> descriptor(A, buf, buf)
0
>>> print(buf.getvalue().splitlines()[1])
  start address 1024, leading byte offset 16, stride byte offset 1024, base offset 0
"""

from __future__ import annotations

import argparse
import json
from typing import TextIO

from bankproof.models.engines.descriptors import WIDTH, decode, read_addresses
from bankproof.models.errors import InputError

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8}


def _canonical(major: str, swizzle: str) -> str:
    """The canonical layout in 16-byte units (CUTLASS make_gmma_desc's comments)."""
    w = WIDTH[swizzle]
    if major == "K":
        return f"((8,m),2):(({w},SBO),{'LBO' if w == 1 else 1})"
    return "((1,m),(8,k)):((.,SBO),(1,LBO))" if w == 1 else f"(({w},m),(8,k)):((1,LBO),({w},SBO))"


def descriptor(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    text = str(args.value).strip().lower()
    try:
        value = int(text, 16) if text.startswith("0x") else int(text)
    except ValueError:
        why = "must be a 64-bit integer (0x... hex or decimal)"
        raise InputError("descriptor", "value", why, args.value) from None
    if args.dtype not in BITS:
        raise InputError("descriptor", "dtype", f"must be one of {', '.join(BITS)}", args.dtype)
    d = decode(value, args.arch)
    addrs = read_addresses(d, args.major, BITS[args.dtype], args.rows)
    canon = _canonical(args.major, d.swizzle.name)
    tile = {"rows": args.rows, "k": int(addrs.shape[1]), "byte_addresses": addrs.tolist()}
    result = {**d.fields(), "value": f"0x{value:016x}", "major": args.major, "dtype": args.dtype,
              "canonical_16B_units": canon, "tile": tile}  # fmt: skip
    if args.json:
        out.write(json.dumps(result, indent=1) + "\n")
        return 0
    out.write(f"{args.arch} descriptor 0x{value:016x}\n")
    out.write(f"  start address {d.start}, leading byte offset {d.lbo}, stride byte offset {d.sbo}, "
              f"base offset {d.base_offset}\n")  # fmt: skip
    mode = ", lbo mode absolute" if d.lbo_mode else ""
    out.write(f"  swizzle {d.swizzle.name} ({d.swizzle.cute} on byte addresses){mode}\n")
    out.write(f"  canonical {args.major}-major layout, 16-byte units: Sw o {canon}\n")
    out.write(f"  tile read: {args.rows} rows x {addrs.shape[1]} {args.dtype} (one 32-byte K step); "
              "byte address of each row's first element:\n")  # fmt: skip
    out.write("   " + " ".join(str(int(a)) for a in addrs[:, 0]) + "\n")
    return 0
