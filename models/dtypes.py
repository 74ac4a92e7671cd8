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


# other spellings of the same types: PTX's (``e4m3``, ``s8``), CUTLASS/CuTe C++'s (``half_t``,
# ``float_e4m3_t``, ``int8_t``; ``cutlass::`` may precede them), and common ones (``fp16``, ``int8``)
ALIASES = {
    "e4m3": "f8e4m3", "e5m2": "f8e5m2", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "fp64": "f64", "fp32": "f32", "fp16": "f16", "float64": "f64", "float32": "f32", "float16": "f16",
    "bfloat16": "bf16", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "uint16": "u16", "uint32": "u32", "uint64": "u64", "double": "f64", "float": "f32", "half_t": "f16",
    "bfloat16_t": "bf16", "tfloat32_t": "tf32", "float_e4m3_t": "f8e4m3", "float_e5m2_t": "f8e5m2",
    "float_e2m1_t": "f4e2m1", "int4b_t": "i4", "uint4b_t": "u4", "int8_t": "i8", "uint8_t": "u8",
    "int16_t": "i16", "uint16_t": "u16", "int32_t": "i32", "uint32_t": "u32", "int64_t": "i64",
    "uint64_t": "u64",
}  # fmt: skip


def canonical(name: str) -> str:
    """The one name of a dtype, whichever spelling is given (case-insensitive); an input error
    names the valid ones.

    >>> canonical("e4m3"), canonical("cutlass::half_t"), canonical("F8E4M3FN"), canonical("int8_t")
    ('f8e4m3', 'f16', 'f8e4m3fn', 'i8')
    """
    key = name.strip().lower() if isinstance(name, str) else None
    if key is not None and key.startswith("cutlass::"):
        key = key[len("cutlass::") :]
    key = ALIASES.get(key, key) if key is not None else None
    if key not in BITS:
        known = ", ".join(BITS) + "; also " + ", ".join(ALIASES)
        raise InputError("dtype", "name", f"is unknown (known: {known})", name)
    return key


def bits(name: str) -> int:
    """Width in bits of a dtype name, any spelling (:func:`canonical`)."""
    return BITS[canonical(name)]
