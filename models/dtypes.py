"""Element types by name and their widths in bits: the spec names and Triton's MLIR names
(``f8E4M3FN``, ``f4E2M1FN``; case does not matter), each defined here once.

>>> bits("f16"), bits("bf16"), bits("f8e4m3"), bits("f8E4M3FN"), bits("f4E2M1FN"), bits("i1")
(16, 16, 8, 8, 4, 8)
"""

from __future__ import annotations

from bankproof.models.errors import InputError

BITS = {
    "f64": 64,
    "f32": 32,
    "tf32": 32,
    "f16": 16,
    "bf16": 16,
    "f8e4m3": 8,
    "f8e5m2": 8,
    "f8e4m3fn": 8,
    "f8e4m3fnuz": 8,
    "f8e5m2fnuz": 8,
    "f8e4m3b11fnuz": 8,
    "f4e2m1": 4,  # fp4; Triton packs two per byte (i8 tensors, fp4Padded shared layouts)
    "f4e2m1fn": 4,
    "e2m1": 4,
    "i4": 4,
    "u4": 4,
    "i1": 8,  # Triton stores booleans as bytes
    "i64": 64,
    "i32": 32,
    "i16": 16,
    "i8": 8,
    "u64": 64,
    "u32": 32,
    "u16": 16,
    "u8": 8,
}


def bits(name: str) -> int:
    """Width in bits of a dtype name (case-insensitive); an input error names the valid ones."""
    key = name.strip().lower() if isinstance(name, str) else None
    if key not in BITS:
        raise InputError("dtype", "name", f"is unknown (known: {', '.join(BITS)})", name)
    return BITS[key]
