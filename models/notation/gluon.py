"""Triton Gluon layout objects, read as the Triton attributes they build.

A Gluon layout (``triton.experimental.gluon.language``) is a frozen dataclass whose fields are
the fields of one ``#ttg`` attribute: ``BlockedLayout.size_per_thread`` is ``sizePerThread``,
``NVMMASharedLayout.swizzle_byte_width`` is ``swizzlingByteWidth``, and so on. This module maps
the fields (by the class's name, so Triton is never imported here) onto the attribute and hands
it to :mod:`~bankproof.models.notation.triton`, which checks every field and builds the linear
layout exactly as Triton 3.9.0's ``to_linear_layout`` does (tests/test_gluon_agreement.py
compares them on random objects). Subclasses (``MBarrierLayout``) are read as their Gluon base.

>>> from dataclasses import dataclass
>>> @dataclass
... class SwizzledSharedLayout:  # stands in for Gluon's class of that name
...     vec: int; per_phase: int; max_phase: int; order: list; cga_layout: list
>>> SwizzledSharedLayout.__module__ = "triton.experimental.gluon.language._layouts"
>>> obj = SwizzledSharedLayout(8, 1, 8, [1, 0], [])
>>> is_gluon(obj), gluon_attribute(obj).text()
(True, '#ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>')
"""

from __future__ import annotations

from collections.abc import Callable

from bankproof.models.errors import InputError
from bankproof.models.notation.mlir import Attribute
from bankproof.models.notation.triton import TritonLayout, from_attribute

GLUON_MODULE = "triton.experimental.gluon"
WHERE = "gluon"


def _classes(obj: object) -> list[str]:
    """Names of the Gluon classes ``obj`` is an instance of, most derived first."""
    return [c.__name__ for c in type(obj).__mro__ if c.__module__.startswith(GLUON_MODULE)]


def is_gluon(obj: object) -> bool:
    """Whether ``obj`` is a Gluon layout object (judged by its class's module; no import)."""
    return bool(_classes(obj))


def _value(obj: object, cls: str, name: str, depth: int = 0) -> object:
    """A field's value as plain ints, bools and lists; anything else is refused naming it."""
    try:
        v = getattr(obj, name, None) if depth == 0 else obj
        if type(v).__name__ == "constexpr" and hasattr(v, "value"):  # Gluon's constexpr wrapper
            v = v.value
    except Exception:  # noqa: BLE001 - a property of the user's object failed: name it
        raise InputError(WHERE, f"{cls}.{name}", "cannot be read") from None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        if abs(v) > 1 << 32:  # no layout field is near it: sizes and bases are within a tensor's 2^24
            raise InputError(WHERE, f"{cls}.{name}", "is beyond 2^32 in magnitude", v)
        return v
    if isinstance(v, (list, tuple)) and depth < 3 and len(v) <= 64:
        return [_value(x, cls, name, depth + 1) for x in v]
    raise InputError(WHERE, f"{cls}.{name}", "must be an integer, a bool or a short list of them", v)


def _field_map(pairs: dict[str, str]) -> Callable[[object, str], dict]:
    """Reads Gluon fields (keys) into attribute params (values); empty CGA lists are left out."""

    def read(obj: object, cls: str) -> dict:
        out = {}
        for gluon_name, attr_name in pairs.items():
            v = _value(obj, cls, gluon_name)
            if attr_name in ("CGALayout", "block") and v == []:
                continue
            out[attr_name] = v
        return out

    return read


_PLAIN = {
    "BlockedLayout": (
        "ttg.blocked",
        _field_map(
            {
                "size_per_thread": "sizePerThread",
                "threads_per_warp": "threadsPerWarp",
                "warps_per_cta": "warpsPerCTA",
                "order": "order",
                "cga_layout": "CGALayout",
            }
        ),
    ),
    "DistributedLinearLayout": (
        "ttg.linear",
        _field_map(
            {"reg_bases": "register", "lane_bases": "lane", "warp_bases": "warp", "block_bases": "block"}
        ),
    ),
    "SwizzledSharedLayout": (
        "ttg.swizzled_shared",
        _field_map(
            {
                "vec": "vec",
                "per_phase": "perPhase",
                "max_phase": "maxPhase",
                "order": "order",
                "cga_layout": "CGALayout",
            }
        ),
    ),  # fmt: skip
    "NVMMASharedLayout": (
        "ttg.nvmma_shared",
        _field_map(
            {
                "swizzle_byte_width": "swizzlingByteWidth",
                "transposed": "transposed",
                "element_bitwidth": "elementBitWidth",
                "fp4_padded": "fp4Padded",
                "rank": "rank",
                "cga_layout": "CGALayout",
            }
        ),
    ),
    "AMDMFMALayout": (
        "ttg.amd_mfma",
        _field_map(
            {
                "version": "version",
                "warps_per_cta": "warpsPerCTA",
                "instr_shape": "instrShape",
                "transposed": "isTransposed",
                "tiles_per_warp": "tilesPerWarp",
                "element_bitwidth": "elementBitWidth",
                "cga_layout": "CGALayout",
            }
        ),
    ),
}
NESTED = ("SliceLayout", "DotOperandLayout")
OTHER = ("NVMMADistributedLayout", "SharedLinearLayout", "PaddedSharedLayout", "AMDWMMALayout")
SUPPORTED = tuple(_PLAIN) + NESTED + OTHER


def _attribute(obj: object, depth: int = 0) -> Attribute:
    names = _classes(obj)
    cls = next((n for n in names if n in SUPPORTED), None)
    if cls is None:
        given = names[0] if names else type(obj).__name__
        raise InputError(
            WHERE,
            "layout",
            f"must be one of Gluon's {', '.join(SUPPORTED)} (a concrete layout)",
            given,
        )
    if cls in _PLAIN:
        kind, read = _PLAIN[cls]
        return Attribute(kind, read(obj, cls))
    if cls in NESTED:
        if depth > 8:
            raise InputError(WHERE, f"{cls}.parent", "nests too deeply")
        parent = getattr(obj, "parent", None)
        if not is_gluon(parent):
            raise InputError(WHERE, f"{cls}.parent", "must be a Gluon layout", repr(parent)[:80])
        params: dict = {"parent": _attribute(parent, depth + 1)}
        if cls == "SliceLayout":
            params["dim"] = _value(obj, cls, "dim")
            return Attribute("ttg.slice", params)
        params["opIdx"] = _value(obj, cls, "operand_index")
        params["kWidth"] = _value(obj, cls, "k_width")
        return Attribute("ttg.dot_op", params)
    if cls == "NVMMADistributedLayout":
        version = _value(obj, cls, "version")
        if not (isinstance(version, list) and len(version) == 2):
            raise InputError(WHERE, f"{cls}.version", "must be [major, minor]", version)
        params = {"versionMajor": version[0], "versionMinor": version[1]}
        params.update(_field_map({"warps_per_cta": "warpsPerCTA", "instr_shape": "instrShape",
                                  "cga_layout": "CGALayout"})(obj, cls))  # fmt: skip
        return Attribute("ttg.nvidia_mma", params)
    if cls == "AMDWMMALayout":
        params = _field_map({"version": "version", "transposed": "isTranspose", "instr_shape": "instrShape",
                             "rank": "rank", "cga_layout": "CGALayout"})(obj, cls)  # fmt: skip
        grid = {"register": _value(obj, cls, "reg_bases"), "warp": _value(obj, cls, "warp_bases")}
        params["ctaLayout"] = grid
        return Attribute("ttg.amd_wmma", params)
    if cls == "SharedLinearLayout":
        params = _field_map({"offset_bases": "offset", "block_bases": "block"})(obj, cls)
        return Attribute("ttg.shared_linear", params, trailing={"alignment": _value(obj, cls, "alignment")})
    pairs = _value(obj, cls, "interval_padding_pairs")  # PaddedSharedLayout
    if not isinstance(pairs, list) or not all(isinstance(p, list) and len(p) == 2 for p in pairs):
        raise InputError(WHERE, f"{cls}.interval_padding_pairs", "must list [interval, padding] pairs", pairs)
    params = _field_map({"offset_bases": "offset", "cga_layout": "block"})(obj, cls)
    params.setdefault("block", [])
    return Attribute("ttg.padded_shared", params, intervals=[(int(i), int(p)) for i, p in pairs])


def gluon_attribute(obj: object) -> TritonLayout:
    """The checked Triton attribute a Gluon layout object builds (see the module example)."""
    return from_attribute(_attribute(obj))


def gluon_shape(obj: object) -> list[int] | None:
    """The tensor shape a Gluon object carries (``DistributedLinearLayout.shape``,
    ``PaddedSharedLayout.shape``, ``SharedLinearLayout.shape``), or None: the default when no
    shape is given."""
    names = _classes(obj)
    if not {"DistributedLinearLayout", "PaddedSharedLayout", "SharedLinearLayout"} & set(names):
        return None
    shape = _value(obj, names[0], "shape")
    if not (isinstance(shape, list) and shape and all(isinstance(s, int) for s in shape)):
        raise InputError(WHERE, f"{names[0]}.shape", "must be a list of sizes", shape)
    return shape
